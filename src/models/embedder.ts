/**
 * The embedding contract every provider implements (builtin ONNX, Ollama, OpenAI-compatible).
 * Callers build one through `createEmbedder` in registry.ts; `init()` is optional (embed() loads on
 * first use) but lets the daemon fail fast and report state in health.
 */

/** What health shows for a model. `error` is the last load failure, if any. */
export interface ModelStatus {
  loaded: boolean;
  id: string;
  dimension: number;
  error?: string;
}

/** Counts and locates tokens the way the model sees them, so chunks can be sized in model tokens. */
export interface TokenCounter {
  /**
   * Number of tokens the model would see for `text` before truncation, including the special tokens
   * it adds (e.g. [CLS]/[SEP]): `count(text) <= maxTokens` means nothing is cut off. Remote providers
   * whose tokenizer is unknown return an estimate that errs high.
   */
  count(text: string): number;
  /**
   * Token ids and, for each, the [start, end) UTF-16 offsets into `text` it came from (token offsets for
   * chunking). Special tokens the model adds have the empty span [0, 0].
   */
  encode(text: string): { ids: number[]; offsets: [number, number][] };
}

export type EmbedKind = 'query' | 'passage';

export interface EmbedOptions {
  /** Queries jump ahead of queued passages; some models also prefix them differently. */
  kind: EmbedKind;
  /** Passages a search waits for (its results' sentences): they jump ahead too, embedded as passages. */
  foreground?: boolean;
}

/** A text and spans of it ([start, end) UTF-16 offsets) that each want a vector of their own. */
export interface TextWithUnits {
  text: string;
  units: readonly (readonly [number, number])[];
}

/** A text's vector and one per unit, in order: null for a unit the model did not see (cut off past `maxTokens`). */
export interface UnitVectors {
  vector: Float32Array;
  units: (Float32Array | null)[];
}

export interface Embedder {
  /** Stable id recorded with the index, e.g. `builtin:all-MiniLM-L6-v2`, `ollama:nomic-embed-text`. */
  readonly id: string;
  /** Vector length. For remote providers it is known only after init() (0 before). */
  readonly dimension: number;
  /** Longest input in tokens; longer inputs are truncated by the model. */
  readonly maxTokens: number;
  /**
   * The languages the model was trained to read (ISO 639-1), when they are known to be few: the built-in model reads
   * English. Absent: unknown, or many (a multilingual model served by Ollama).
   */
  readonly languages?: readonly string[];
  readonly tokenizer: TokenCounter;
  init(): Promise<void>;
  /** One L2-normalised vector per text, in input order. */
  embed(texts: string[], opts: EmbedOptions): Promise<Float32Array[]>;
  /**
   * Each text's vector as `embed` gives it, and from the same pass a vector per unit: the text's token states
   * averaged over the unit's tokens (late chunking), L2-normalised, in the space of query vectors. Only models whose
   * token states are at hand have it (the built-in one); remote providers answer one vector per text.
   */
  embedUnits?(items: TextWithUnits[], opts: EmbedOptions): Promise<UnitVectors[]>;
  status(): ModelStatus;
  close(): Promise<void>;
}
