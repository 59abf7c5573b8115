/**
 * The bounds of POST /api/v1/search that its clients check too: the API's schema (search/query.ts) enforces them,
 * the CLI refuses a query the API would refuse before sending it and pages by the largest page, and the web page's
 * search fields take no longer query.
 */

/** Characters a query may have, after trimming. */
export const MAX_QUERY_CHARS = 2000;
/** Results one page of a search may ask for. */
export const MAX_SEARCH_LIMIT = 100;
