/**
 * The comparison test/store/upgrade-from-release.test.ts holds answers to on a CPU other than the fixture's
 * (test/helpers/upgrade-answers.ts) checks what docs/operations.md promises there, no less and no more: on a
 * release's recorded answers, drift within the promise passes and drift past it fails.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/daemon.js';
import { ACROSS_CPUS, expectAnswersAcrossCpus } from '../helpers/upgrade-answers.js';
import type { Observed } from '../helpers/upgrade-library.js';

const then = JSON.parse(readFileSync(join(REPO, 'test/fixtures/upgrade/v0.1.0/embedded.json'), 'utf8')) as Observed;
type Hit = Observed['searches'][number]['results'][number] & { score: number; scores: { vector?: { similarity: number } } };

/** The recorded answers with search `i`'s results changed by `edit`. */
function changed(i: number, edit: (results: Hit[]) => Hit[]): Observed {
  const copy = structuredClone(then);
  copy.searches[i]!.results = edit(copy.searches[i]!.results as Hit[]);
  return copy;
}
const search = (query: string, user: string) => then.searches.findIndex((s) => s.body.query === query && s.user === user);
const fails = (now: Observed) => expect(() => expectAnswersAcrossCpus(now, then)).toThrow();

describe('answers across CPUs: the promised drift, and no more', () => {
  const free = search('freedom to share and change free software', 'alice@example.com');
  const leave = search('paid annual leave', 'bob@example.com');

  it('passes the release’s own answers, and drift within the promise', () => {
    expectAnswersAcrossCpus(then, then);
    const drift = ACROSS_CPUS.similarity * 0.9;
    expectAnswersAcrossCpus(
      changed(free, (rs) => rs.map((r) => ({ ...r, score: r.score - ACROSS_CPUS.score * 0.9, scores: { ...r.scores, ...(r.scores.vector ? { vector: { ...r.scores.vector, similarity: r.scores.vector.similarity + drift } } : {}) } }))),
      then,
    );
  });

  it('lets two results the release scored within twice the drift trade places, and no others', () => {
    // bob's "paid annual leave": 0.5 and 0.49967.
    expectAnswersAcrossCpus(changed(leave, ([a, b, ...rest]) => [b!, a!, ...rest]), then);
    fails(changed(free, ([a, b, ...rest]) => [b!, a!, ...rest]));
  });

  it('fails a similarity or score past the drift, a result lost from the top, or a stranger above the end of the page', () => {
    fails(changed(free, ([a, ...rest]) => [{ ...a!, scores: { ...a!.scores, vector: { ...a!.scores.vector!, similarity: a!.scores.vector!.similarity + 2 * ACROSS_CPUS.similarity } } }, ...rest]));
    fails(changed(free, ([a, ...rest]) => [{ ...a!, score: a!.score - 2 * ACROSS_CPUS.score }, ...rest]));
    fails(changed(free, ([, ...rest]) => rest));
    fails(changed(free, ([a, ...rest]) => [a!, { ...rest[0]!, chunk_id: 'chk_stranger:0' }, ...rest.slice(1)]));
  });

  it('lets the last result of a page give its place to one scored within the drift of it', () => {
    expectAnswersAcrossCpus(changed(leave, (rs) => [...rs.slice(0, -1), { ...rs.at(-1)!, chunk_id: 'chk_next:0', score: rs.at(-1)!.score - ACROSS_CPUS.score / 2 }]), then);
  });

  it('takes a keyword match\'s BM25 value from the re-analysed index, but not a match lost or gained', () => {
    type Keyworded = Hit & { scores: { keyword?: { bm25: number; rank: number } } };
    const kw = then.searches.findIndex((s) => (s.results as Keyworded[]).some((r) => r.scores.keyword));
    expect(kw).toBeGreaterThanOrEqual(0);
    const withBm25 = (f: (k: { bm25: number; rank: number } | undefined) => { bm25: number; rank: number } | undefined) =>
      changed(kw, (rs) => (rs as Keyworded[]).map((r) => {
        const keyword = f(r.scores.keyword);
        const { keyword: _k, ...scores } = r.scores;
        return { ...r, scores: { ...scores, ...(keyword ? { keyword } : {}) } };
      }));
    expectAnswersAcrossCpus(withBm25((k) => (k ? { ...k, bm25: k.bm25 * 2.5 } : k)), then);
    fails(withBm25(() => undefined));
  });

  it('holds every field the release answered with but where the answer lies in a chunk, which each release chooses', () => {
    expectAnswersAcrossCpus(changed(free, ([a, ...rest]) => [{ ...a!, highlights: [[0, 12]] }, ...rest]), then);
    fails(changed(free, ([a, ...rest]) => [{ ...a!, heading: 'Another heading' }, ...rest]));
    fails(changed(free, ([a, ...rest]) => [{ ...a!, page_start: 99 }, ...rest]));
  });
});
