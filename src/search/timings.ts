/**
 * Where a search's time goes, for whoever watches (the daemon's metrics): each stage's seconds as it ends, and the
 * whole search's. Stages of one search overlap (the keyword list is read while the query is embedded), so they are
 * not a split of the total.
 */
export type SearchStage =
  /** Embedding the query (only when the query-vector cache did not have it). */
  | 'embed'
  /** The keyword (BM25) list. */
  | 'keyword'
  /** The vector list, from the query's vector to the hits. */
  | 'vector'
  /** Which candidate documents this search may show. */
  | 'visibility'
  /** Fusion of both lists and the relevance floor. */
  | 'fusion'
  /** Reading the head's rows and reranking it (when a reranker ran). */
  | 'rerank'
  /** Rows, documents and projects of the page shown, and their answers (from the units stored with the rows). */
  | 'hydrate'
  /** Turning the search's filters into the chunk columns' values (searches with filters). */
  | 'filters'
  /** Counting the facets asked over the whole list (within `hydrate`). */
  | 'facets';

export interface SearchTimings {
  stage(stage: SearchStage, seconds: number): void;
  /** A search answered (not one that failed). */
  search(seconds: number): void;
}
