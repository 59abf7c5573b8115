import { z } from 'zod';

/**
 * `value` or null. The SDK writes a plain `z.string().nullable()` as `type: ["string", "null"]`, which clients that
 * read one `type` per schema (the OpenAPI subset of Gemini's function declarations) reject, and the Inspector's
 * `--strict` warns of; a union whose branch carries a keyword of its own is written as `anyOf` of single types.
 */
export const orNull = <T extends z.ZodType>(value: T) => z.union([value, z.null()]);

/** A string that is never empty, or null: `anyOf` [string (minLength 1), null] (see orNull). */
export const stringOrNull = () => orNull(z.string().min(1));
