/**
 * Korean: words are spaced, but particles and endings attach to them (도서관에서 "at the library"), and compounds
 * are spaced or not at the writer's whim (첨부 파일, 첨부파일). A word's forms are the word, the word without a
 * trailing particle, and its syllable bigrams: the bigrams meet a compound written either way.
 */

/** Common particles (postpositions), longest first so that 에서 is tried before 서. */
const PARTICLES = [
  '에서부터', '으로부터', '에게서', '한테서', '이라고', '까지는', '에서는', '에서도', '으로는', '으로도', '에게는', '보다는',
  '에서', '에게', '한테', '께서', '으로', '부터', '까지', '처럼', '보다', '이나', '마다', '조차', '마저', '이라', '라고', '하고', '이랑', '과는', '와는', '은요', '는요',
  '은', '는', '이', '가', '을', '를', '의', '에', '로', '와', '과', '도', '만', '나', '랑', '요',
].sort((a, b) => b.length - a.length);

/** The word without one trailing particle, when at least two syllables remain; else the word. */
export function withoutParticle(word: string): string {
  for (const p of PARTICLES) {
    if (word.length - p.length >= 2 && word.endsWith(p)) return word.slice(0, -p.length);
  }
  return word;
}
