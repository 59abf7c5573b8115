/**
 * CLI output with Chinese and Japanese names on a real pseudo-terminal (util-linux `script`), 80 and 120 columns wide:
 * every line fits the terminal by display width (a CJK character takes two columns), and a table's columns start
 * at the same terminal column on every row (#59 item 5).
 */
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { api } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { type CliSuite, cliSuite } from './cli-env.js';
import { onTerminal } from './terminal.js';

/** What a person sees on a terminal `cols` wide, styling and cursor movements removed. */
const shown = async (cols: number, args: string[], env: Record<string, string>) => (await onTerminal(cols, args, env)).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

/** A line as terminal cells: a wide character takes two (the second empty), a combining mark none. */
function cells(line: string): string[] {
  const out: string[] = [];
  for (const { segment } of new Intl.Segmenter().segment(line)) {
    const w = stringWidth(segment);
    if (w === 0) continue;
    out.push(segment, ...Array.from({ length: w - 1 }, () => ''));
  }
  return out;
}

/** The terminal column each header word starts at. */
const columnStarts = (header: string): number[] => [...header.matchAll(/\S+( \S+)*/g)].map((m) => stringWidth(header.slice(0, m.index)));

const CHINESE = '图书馆借阅规则与逾期罚款说明（二〇二六年修订版）.txt';
const JAPANESE = '図書館の利用案内と貸出期間についてのお知らせ.txt';
const PROJECT = '図書館の利用案内と貸出規則';

describe('CLI output with Chinese and Japanese names', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { timeoutMs: 60_000 });

  it('tables and results fit 80 and 120 columns by display width, and table columns line up on every row', { timeout: 300_000 }, async () => {
    const project = await api(s.d, '/api/v1/projects', { token: s.user.apiKey, body: { name: PROJECT } });
    expect(project.status, JSON.stringify(project.body)).toBe(201);
    const files = [
      { name: CHINESE, bytes: Buffer.from('图书馆的书可以借阅十九天。逾期每天罚款五角。') },
      { name: JAPANESE, bytes: Buffer.from('図書館の本は十九日間借りることができます。延滞すると罰金があります。') },
      { name: 'library loans.txt', bytes: Buffer.from('Library books may be borrowed for nineteen days.') },
    ];
    const up = await uploadFiles(s.d, s.user.apiKey, files, { query: '?wait=true', projectId: (project.body as { id: string }).id });
    expect(up.status, JSON.stringify(up.body)).toBe(200);

    for (const cols of [80, 120]) {
      const seen = new Map<string, string[]>();
      for (const args of [['documents', 'list'], ['projects', 'list'], ['search', '图书馆'], ['search', '図書館', '--passages']]) {
        const lines = (await shown(cols, args, s.env)).split('\n').filter((l) => l.trim());
        const what = `${args.join(' ')} at ${cols} columns:\n${lines.join('\n')}`;
        expect(lines.length, what).toBeGreaterThan(2);
        for (const line of lines) expect(stringWidth(line), what).toBeLessThanOrEqual(cols);
        seen.set(args.join(' '), lines);
      }
      // Tables: each column starts where its header does, on every row, after the two-space gutter.
      for (const table of ['documents list', 'projects list']) {
        const [header, ...rows] = seen.get(table)!;
        const starts = columnStarts(header!).slice(1);
        expect(starts.length, `${table}: ${header}`).toBeGreaterThanOrEqual(2);
        for (const row of rows) {
          const c = cells(row);
          for (const at of starts) expect([c[at - 2], c[at - 1], c[at] !== ' ' && c[at] !== ''], `${table} at ${cols}, column ${at}:\n${header}\n${row}`).toEqual([' ', ' ', true]);
        }
      }
      // The names stay readable (counts and dates give way first): each name's first ten characters at least.
      const opening = (name: string) => [...name].slice(0, 10).join('');
      expect(seen.get('projects list')!.join('\n')).toContain(opening(PROJECT));
      for (const name of [CHINESE, JAPANESE]) expect(seen.get('documents list')!.join('\n')).toContain(opening(name));
      // Search shows the whole file name and the answer on a terminal of either width.
      expect(seen.get('search 图书馆')!.join('\n')).toContain(CHINESE);
      expect(seen.get('search 图书馆')!.join('\n')).toContain('借阅十九天');
      expect(seen.get('search 図書館 --passages')!.join('\n')).toContain(JAPANESE);
    }
  });
});
