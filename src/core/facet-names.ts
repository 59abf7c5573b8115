/** The facets a search counts (docs/api.md#facets), besides `metadata.<key>` for any metadata key: a plain list the CLI can load (no zod). */
export const FACETS = ['type', 'project', 'uploaded_by', 'year', 'label', 'language'] as const;
