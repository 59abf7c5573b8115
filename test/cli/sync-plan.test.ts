import { beforeAll, describe, expect, it } from 'vitest';
import type { DocumentRecord } from '../../src/cli/api-types.js';
import { passage } from '../../src/cli/commands/search.js';
import { loadColumns } from '../../src/cli/output/columns.js';
import { wrap } from '../../src/cli/output/wrap.js';
import { defaultMaxDelete, movedAway, planSync, pruned } from '../../src/cli/upload/sync-plan.js';

const file = (rel: string, sha256: string) => ({ path: `docs/${rel}`, name: rel.split('/').at(-1)!, rel, size: 1, sha256 });
const doc = (id: string, path: string | null, sha256: string) => ({ id, path, sha256, filename: 'x', size_bytes: 1, content_type: 'text/plain', project_id: 'prj', status: 'ready' }) as DocumentRecord;

describe('upload --sync plan', () => {
  const docs = [doc('d1', 'a.txt', 'A'), doc('d2', 'b.txt', 'B'), doc('d3', 'gone.txt', 'G'), doc('d4', null, 'N'), doc('d5', 'moved.txt', 'M')];

  it('unchanged, new, changed, pruned; documents without a path are never touched', () => {
    const plan = planSync([file('a.txt', 'A'), file('b.txt', 'B2'), file('sub/c.txt', 'C'), file('moved.txt', 'M')], docs, true);
    expect(plan.unchanged.map((u) => u.file.rel)).toEqual(['a.txt', 'moved.txt']);
    expect(plan.replace.map((f) => f.rel)).toEqual(['b.txt']);
    expect(plan.add.map((f) => f.rel)).toEqual(['sub/c.txt']);
    expect(plan.remove).toEqual([{ document: docs[2], reason: 'pruned' }]);
    expect(planSync([file('a.txt', 'A')], docs, false).remove).toEqual([]);
  });

  it("an e-mail's attachments (paths under the message) are never pruned, moved or counted: they go with their message", () => {
    const mail = [doc('m', 'mail/a.eml', 'E'), { ...doc('att', 'mail/a.eml/report.pdf', 'P'), attached_to: 'm' }];
    const plan = planSync([file('mail/a.eml', 'E'), file('mail/copy-of-report.pdf', 'P')], mail, true);
    expect(plan.remove).toEqual([]);
    expect(plan.synced).toBe(1);
    expect(plan.unchanged.map((u) => u.document.id)).toEqual(['m', 'att']);
  });

  it('bytes the project holds under another path are not sent again; the old version at this path goes', () => {
    const plan = planSync([file('a.txt', 'N')], docs, false);
    expect(plan.add).toEqual([]);
    expect(plan.replace).toEqual([]);
    expect(plan.unchanged.map((u) => u.file.rel)).toEqual(['a.txt']);
    expect(plan.remove).toEqual([{ document: docs[0], reason: 'stale' }]);
    expect(plan.unchanged[0]!.document).toBe(docs[3]);
  });

  it('with --prune, bytes whose only path is gone are a moved file: its document goes first and the bytes are sent at the new path', () => {
    const plan = planSync([file('a.txt', 'A'), file('b.txt', 'B'), file('new/place.txt', 'G'), file('copy.txt', 'G')], docs, true);
    expect(plan.add.map((f) => f.rel)).toEqual(['new/place.txt', 'copy.txt']);
    expect(plan.remove).toEqual([{ document: docs[2], reason: 'moved' }, { document: docs[4], reason: 'pruned' }]);
    expect(movedAway(plan)).toEqual([docs[2]]);
    // The guard counts a move: a wrong folder holding another folder's bytes looks like one.
    expect(pruned(plan).map((r) => r.document.id)).toEqual(['d3', 'd5']);
    // Without --prune nothing is deleted: the bytes stay under their old path.
    const kept = planSync([file('new/place.txt', 'G')], docs, false);
    expect(kept.remove).toEqual([]);
    expect(kept.unchanged[0]!.document).toBe(docs[2]);
  });

  it('with a prefix, only documents below it belong to the sync: another folder\'s documents are never pruned', () => {
    const mixed = [doc('a1', 'a/x.txt', 'X'), doc('a2', 'a/y.txt', 'Y'), doc('b1', 'b/x.txt', 'BX'), doc('r1', 'root.txt', 'R')];
    const plan = planSync([{ ...file('x.txt', 'X'), rel: 'a/x.txt' }], mixed, true, 'a');
    expect(plan.synced).toBe(2);
    expect(pruned(plan).map((r) => r.document.id)).toEqual(['a2']);
    // Without a prefix every document with a path belongs to the sync.
    expect(planSync([file('root.txt', 'R')], mixed, true).synced).toBe(4);
  });

  it('the default delete guard is half of the synced documents, at least one', () => {
    expect([0, 1, 2, 3, 5, 20].map(defaultMaxDelete)).toEqual([1, 1, 1, 1, 2, 10]);
  });
});

describe('search passages and wrapping', () => {
  beforeAll(loadColumns);
  it('a long chunk shows the excerpt opening with its answer, cut at words, highlights shifted', () => {
    const text = `${'lorem ipsum '.repeat(60)}the fire exit is north ${'dolor sit '.repeat(60)}`;
    const at = text.indexOf('fire exit');
    const p = passage({ text, snippet: 'the fire exit is north', highlights: [[at, at + 9]] }, 120);
    expect(p.text.startsWith('… the fire exit is north dolor')).toBe(true);
    expect(p.text.startsWith('… ')).toBe(true);
    expect(p.text.endsWith(' …')).toBe(true);
    expect(p.text.length).toBeLessThanOrEqual(124);
    const [s, e] = p.highlights[0]!;
    expect(p.text.slice(s, e)).toBe('fire exit');
    expect(passage({ text: 'short text', highlights: [[0, 5]] })).toEqual({ text: 'short text', highlights: [[0, 5]] });
  });

  it('wraps to the width with an indent (and a hanging indent), not counting styling', () => {
    const words = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen';
    const lines = wrap(words, 30, '   ', '     ');
    expect(lines[0]).toBe('   one two three four five six');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(30);
    for (const l of lines.slice(1)) expect(l).toMatch(/^ {5}\S/);
    expect(lines.map((l) => l.trim()).join(' ')).toBe(words);
    expect(wrap('\x1b[1mbold\x1b[22m word', 20, '  ')).toEqual(['  \x1b[1mbold\x1b[22m word']);
    // A styled run broken over lines is closed at the line's end and reopened after the hang, so the hang is plain.
    const styled = wrap(`\x1b[4m${words}\x1b[24m`, 30, '', '  ');
    for (const l of styled) expect(l).toMatch(/^ *\x1b\[4m.*\x1b\[24m$/);
    // Line breaks in a passage are white space like any other; a word wider than the line is broken to its width.
    expect(wrap(`a\n\nb ${'x'.repeat(25)} c`, 20)).toEqual(['a b', 'x'.repeat(20), `${'x'.repeat(5)} c`]);
  });
});
