/**
 * Chinese word segmentation: jieba (@node-rs/jieba, its dictionary shipped in the package), loaded the first time a
 * Chinese text is analysed — ~1 s and ~55 MB, which a library without Chinese never pays.
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
