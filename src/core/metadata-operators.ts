/**
 * The operators of a metadata condition in the filter language (core/filters.ts). Apart from its schemas so the
 * client's filter flags (core/filter-params.ts) can name them without loading zod at start-up.
 */
export const METADATA_OPERATORS = ['$eq', '$in', '$gt', '$gte', '$lt', '$lte', '$exists'] as const;
