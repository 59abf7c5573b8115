/**
 * Nonsense queries for calibrating and checking the relevance floor (src/search/floor.ts): made-up words
 * that no library contains and that mean nothing — pronounceable pseudo-words ("xyzzyplugh frobnicate"),
 * keyboard mash, letter-digit codes — one to four words each. Deterministic for a seed, so the bench's
 * calibration set (one seed) and its check set (another) are the same on every run and never overlap.
 *
 *   node --import tsx bench/nonsense.ts [count] [seed]   prints them, one a line
 */
import { rng } from './scifact.js';

const ONSETS = ['b', 'bl', 'br', 'ch', 'd', 'dr', 'f', 'fl', 'fr', 'g', 'gl', 'gr', 'j', 'k', 'kl', 'kr', 'm', 'n', 'p', 'pl', 'pr', 'qu', 'sk', 'sn', 'sp', 'str', 'thr', 'tw', 'v', 'vr', 'w', 'x', 'z', 'zh'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'oo', 'ai', 'ei', 'ou', 'y'];
const CODAS = ['', '', 'b', 'ck', 'dge', 'ff', 'g', 'lk', 'mp', 'nk', 'nt', 'rb', 'rk', 'sh', 'sk', 'tch', 'x', 'zz'];
const KEYBOARD = ['qwertyuiop', 'asdfghjkl', 'zxcvbnm'];

function pseudoWord(rand: () => number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const syllables = 2 + Math.floor(rand() * 3);
  let w = '';
  for (let i = 0; i < syllables; i++) w += pick(ONSETS) + pick(VOWELS) + (i === syllables - 1 || rand() < 0.3 ? pick(CODAS) : '');
  return w;
}

function mash(rand: () => number): string {
  const row = KEYBOARD[Math.floor(rand() * KEYBOARD.length)]!;
  const n = 4 + Math.floor(rand() * 6);
  return Array.from({ length: n }, () => row[Math.floor(rand() * row.length)]).join('');
}

function code(rand: () => number): string {
  const letters = 'bcdfghjklmnpqrstvwxz';
  const n = 3 + Math.floor(rand() * 3);
  return Array.from({ length: n }, (_, i) => (i % 2 ? String(Math.floor(rand() * 10)) : letters[Math.floor(rand() * letters.length)])).join('');
}

/** `count` nonsense queries for `seed`. */
export function nonsenseQueries(count: number, seed: number): string[] {
  const rand = rng(seed);
  const out = new Set<string>();
  while (out.size < count) {
    const words = 1 + Math.floor(rand() * 4);
    const parts = Array.from({ length: words }, () => {
      const r = rand();
      return r < 0.7 ? pseudoWord(rand) : r < 0.85 ? mash(rand) : code(rand);
    });
    out.add(parts.join(' '));
  }
  return [...out];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${nonsenseQueries(Number(process.argv[2] ?? 50), Number(process.argv[3] ?? 1)).join('\n')}\n`);
}
