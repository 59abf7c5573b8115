/** Bounds on what one tool call returns, so an answer fits a model's context and says when it was cut. */

/** A search passage longer than this is cut (chunks are ~256 tokens, so this rarely happens). */
export const MAX_PASSAGE_CHARS = 2000;
/** get_document: characters returned per call by default, and at most. */
export const DEFAULT_WINDOW_CHARS = 20_000;
export const MAX_WINDOW_CHARS = 100_000;
/** add_document: the largest note, in characters. */
export const MAX_NOTE_CHARS = 1_000_000;
/** list_* and search: results per call. */
export const DEFAULT_LIST_LIMIT = 25;
export const MAX_LIST_LIMIT = 100;
export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 50;
/** get_documents: documents per call, and characters of text in all by default. */
export const MAX_MULTI_DOCUMENTS = 20;
export const DEFAULT_MULTI_CHARS = 50_000;
/** search: ids in project_ids or document_ids, each checked to be the caller's. */
export const MAX_FILTER_IDS = 50;
