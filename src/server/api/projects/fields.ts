import { z } from 'zod';
import { Metadata, readableText } from '../schemas.js';

export const ProjectName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .superRefine(readableText);

export const ProjectDescription = z.string().max(2000);

/** Metadata is a small JSON object: bounded so a project row stays a row. */
export const ProjectMetadata = Metadata.refine((m) => JSON.stringify(m).length <= 16_384, 'must be at most 16 KiB of JSON');
