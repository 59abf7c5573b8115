/** Options several kinds share, as pieces of their strict option objects. */
import { z } from 'zod';
import { MAX_GLOB_CHARS, MAX_GLOBS, MAX_SOURCE_SECRET_CHARS, MAX_SOURCE_USERNAME_CHARS } from '../../core/source-limits.js';

const Glob = z.string().min(1).max(MAX_GLOB_CHARS);

/** Which paths of the source become documents: all (no `include`), minus those an `exclude` glob matches. */
export const globOptions = {
  include: z.array(Glob).max(MAX_GLOBS).optional().describe('globs of the paths to index (default: all), e.g. ["**/*.md", "docs/**"]'),
  exclude: z.array(Glob).max(MAX_GLOBS).optional().describe('globs of the paths to leave out'),
};

/** A user name for basic authentication (its password is a secret option). */
export const username = z.string().min(1).max(MAX_SOURCE_USERNAME_CHARS);
export const secret = z.string().min(1).max(MAX_SOURCE_SECRET_CHARS);

/** Whether a URL option carries no user name or password: options are shown and audited as they are, never sealed. */
export const noUserinfo = (url: string): boolean => !URL.canParse(url) || (new URL(url).username === '' && new URL(url).password === '');
