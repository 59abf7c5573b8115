/**
 * WordPiece's greedy longest-match-first, bounded by the vocabulary's longest piece.
 *
 * @huggingface/tokenizers 0.2 tries every prefix of a word's remainder, longest first, each built by a fresh
 * slice-and-join: a word near the per-word limit (100 characters: base64, minified code, a run of digits) costs
 * ~n³/3 character copies, ~40 µs a character of such text, so a 40 MB line of base64 took tens of minutes to chunk.
 * No prefix longer than the longest vocabulary entry can match, so trying only those gives the same tokens.
 */
import type { Tokenizer } from '@huggingface/tokenizers';

/** Replaces `tokenizer`'s WordPiece model's word encoding with the bounded one; other models are left as they are. */
export function boundWordPiece(tokenizer: Tokenizer): void {
  const model = tokenizer.model;
  const config = model?.config;
  if (!model || config?.type !== 'WordPiece' || typeof config.continuing_subword_prefix !== 'string' || model.unk_token === undefined) return;
  const vocab = model.tokens_to_ids;
  const unk = model.unk_token;
  const prefix = config.continuing_subword_prefix;
  // The library's own default, so a word it calls unknown stays unknown.
  const maxChars = config.max_input_chars_per_word ?? 100;
  // Longest entries in code points, for a word's first piece and for the rest (after the prefix).
  let longestFirst = 0;
  let longestRest = 0;
  for (const entry of vocab.keys()) {
    if (entry.startsWith(prefix)) longestRest = Math.max(longestRest, [...entry.slice(prefix.length)].length);
    longestFirst = Math.max(longestFirst, [...entry].length);
  }

  model.encode = (words: string[]): string[] => {
    const out: string[] = [];
    for (const word of words) {
      // Where each code point starts in `word`, and its end: candidates are slices, not joins.
      const at: number[] = [];
      for (let i = 0; i < word.length; i += (word.codePointAt(i)! > 0xffff ? 2 : 1)) at.push(i);
      const length = at.length;
      at.push(word.length);
      if (length > maxChars) {
        out.push(unk);
        continue;
      }
      const pieces: string[] = [];
      for (let start = 0; start < length; ) {
        let end = Math.min(length, start + (start > 0 ? longestRest : longestFirst));
        let piece: string | undefined;
        for (; end > start; end--) {
          const candidate = (start > 0 ? prefix : '') + word.slice(at[start], at[end]);
          if (vocab.has(candidate)) {
            piece = candidate;
            break;
          }
        }
        if (piece === undefined) {
          // A word with any part the vocabulary lacks is one unknown token, as the library has it.
          pieces.length = 0;
          pieces.push(unk);
          break;
        }
        pieces.push(piece);
        start = end;
      }
      out.push(...pieces);
    }
    return out;
  };
}
