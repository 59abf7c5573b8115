/** Options several kinds share, as pieces of their strict option objects. */
import { z } from 'zod';

const Glob = z.string().min(1).max(500);

/** Which paths of the source become documents: all (no `include`), minus those an `exclude` glob matches. */
export const globOptions = {
  include: z.array(Glob).max(100).optional().describe('globs of the paths to index (default: all), e.g. ["**/*.md", "docs/**"]'),
  exclude: z.array(Glob).max(100).optional().describe('globs of the paths to leave out'),
};

/** A user name for basic authentication (its password is a secret option). */
export const username = z.string().min(1).max(500);
export const secret = z.string().min(1).max(4000);
