/**
 * Chinese: Traditional characters read as Simplified (OpenCC's Taiwan → mainland tables, opencc-js), so 圖書館 and
 * 图书馆 are one word to search; then word segmentation by jieba (@node-rs/jieba, its dictionary shipped in the
 * package). Both load the first time a Chinese text is analysed, a cost (docs/search.md) a library without Chinese
 * never pays.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface Jieba {
  cut(text: string, hmm?: boolean): string[];
}
let jieba: Jieba | undefined;

/** The words of a run of Chinese characters (with jieba's HMM for words its dictionary lacks). */
export function chineseWords(run: string): string[] {
  if (!jieba) {
    const { Jieba } = require('@node-rs/jieba') as { Jieba: { withDict(dict: Uint8Array): Jieba } };
    const { dict } = require('@node-rs/jieba/dict') as { dict: Uint8Array };
    jieba = Jieba.withDict(dict);
  }
  return jieba.cut(run, true);
}

type Convert = (text: string) => string;
let toSimplified: { convert: Convert; traditional: ReadonlySet<string> } | undefined;

/**
 * `run` in Simplified characters. Only a run holding a character the tables change is converted (converting costs
 * ~3 µs a character; the test, a set lookup).
 */
export function simplified(run: string): string {
  if (!toSimplified) {
    const { Converter } = require('opencc-js/t2cn') as { Converter(o: { from: string; to: string }): Convert };
    const convert = Converter({ from: 'tw', to: 'cn' });
    // The characters the tables change: every CJK Unified Ideograph converted once (~50 ms, at load).
    const traditional = new Set<string>();
    for (let cp = 0x4e00; cp <= 0x9fff; cp++) {
      const ch = String.fromCodePoint(cp);
      if (convert(ch) !== ch) traditional.add(ch);
    }
    toSimplified = { convert, traditional };
  }
  for (const ch of run) if (toSimplified.traditional.has(ch)) return toSimplified.convert(run);
  return run;
}
