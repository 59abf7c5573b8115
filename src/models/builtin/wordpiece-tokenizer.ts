/**
 * The built-in model's tokenizer: @huggingface/tokenizers over the package's tokenizer.json, plus the
 * two things that library does not do for us — offsets (see wordpiece-offsets.ts) and truncation that
 * keeps the closing [SEP]. transformers.js truncates after adding special tokens and so drops [SEP],
 * which shifts mean-pooled vectors away from what the model was trained on; we truncate the content
 * and then add [CLS] … [SEP].
 */
import { readFileSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import { LRUCache } from 'lru-cache';
import type { TokenCounter } from '../embedder.js';
import { boundWordPiece } from './wordpiece-longest-match.js';
import { wordPieceOffsets } from './wordpiece-offsets.js';

interface TokenizerJson {
  added_tokens?: { content: string; special?: boolean }[];
  model?: { unk_token?: string };
}

const RECENT = 1024;
const RECENT_MAX_CHARS = 4096;

export class WordPieceTokenizer implements TokenCounter {
  private readonly prefix: number[];
  private readonly suffix: number[];
  private readonly literal: Set<string>;
  private readonly unk: string;
  /**
   * Recent encodings by text. The chunker counts each chunk's text and the embedder encodes the same string
   * moments later; remembering the last few hundred saves that second pass (a quarter of ingest tokenising).
   */
  private readonly recent = new LRUCache<string, number[]>({ max: RECENT });

  private constructor(
    private readonly tokenizer: Tokenizer,
    json: TokenizerJson,
    readonly maxTokens: number,
  ) {
    // The single-sentence template is `[CLS] $A [SEP]`: encoding "" yields exactly the added specials.
    const empty = tokenizer.encode('').ids;
    if (empty.length < 1) throw new Error('tokenizer adds no special tokens; expected a BERT template');
    this.prefix = empty.slice(0, 1);
    this.suffix = empty.slice(1);
    this.literal = new Set((json.added_tokens ?? []).map((t) => t.content));
    this.unk = json.model?.unk_token ?? '[UNK]';
  }

  /** Synchronous (a ~0.5 MB JSON) so an Embedder's `tokenizer` exists from construction. */
  static fromFile(path: string, maxTokens: number): WordPieceTokenizer {
    const json = JSON.parse(readFileSync(path, 'utf8')) as TokenizerJson;
    const tokenizer = new Tokenizer(json, {});
    boundWordPiece(tokenizer);
    return new WordPieceTokenizer(tokenizer, json, maxTokens);
  }

  private content(text: string): number[] {
    const known = this.recent.get(text);
    if (known) return known;
    const ids = this.tokenizer.encode(text, { add_special_tokens: false }).ids;
    if (text.length > RECENT_MAX_CHARS) return ids; // chunk-sized texts only: the cache stays ~2 MB
    this.recent.set(text, ids);
    return ids;
  }

  count(text: string): number {
    return this.content(text).length + this.prefix.length + this.suffix.length;
  }

  encode(text: string): { ids: number[]; offsets: [number, number][] } {
    const ids = this.content(text);
    const tokens = ids.map((id) => this.tokenizer.id_to_token(id) ?? this.unk);
    const offsets = wordPieceOffsets(text, tokens, this.literal, this.unk);
    const empty = (n: number): [number, number][] => Array.from({ length: n }, () => [0, 0] as [number, number]);
    return {
      ids: [...this.prefix, ...ids, ...this.suffix],
      offsets: [...empty(this.prefix.length), ...offsets, ...empty(this.suffix.length)],
    };
  }

  /** The ids the model is fed: content cut to fit `maxTokens`, then [CLS] … [SEP]. */
  modelInput(text: string): number[] {
    return [...this.prefix, ...this.content(text).slice(0, this.room()), ...this.suffix];
  }

  /** `modelInput(text)` and the [start, end) offsets into `text` of the content tokens it keeps (after [CLS]). */
  modelInputWithOffsets(text: string): { ids: number[]; offsets: [number, number][] } {
    const content = this.content(text).slice(0, this.room());
    const tokens = content.map((id) => this.tokenizer.id_to_token(id) ?? this.unk);
    return { ids: [...this.prefix, ...content, ...this.suffix], offsets: wordPieceOffsets(text, tokens, this.literal, this.unk) };
  }

  private room(): number {
    return this.maxTokens - this.prefix.length - this.suffix.length;
  }
}
