/** Lifetimes from the spec's Limits table. */
export const CODE_TTL_MS = 10 * 60_000;
export const ACCESS_TOKEN_TTL_S = 3600;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600_000;
/** Used codes are kept a day past expiry so that a late replay is still detected as reuse. */
export const USED_CODE_RETENTION_MS = 24 * 3600_000;
