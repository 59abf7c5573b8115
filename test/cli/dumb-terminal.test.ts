/**
 * TERM=dumb (Emacs's shell, some CI consoles that give a pseudo-terminal): it cannot move its cursor, so the upload's
 * progress board, which redraws in place with escape sequences, printed them as they are (`^[[2K`, `^[[3A`). On such
 * a terminal the progress is plain lines, as through a pipe; on an xterm the board is kept. On a real
 * pseudo-terminal (util-linux `script`) against a real daemon.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/temp-dirs.js';
import { type CliSuite, cliSuite } from './cli-env.js';
import { onTerminal } from './terminal.js';

describe('upload progress on a dumb terminal', () => {
  const dirs = tempDirs('docsearch-dumb-terminal');
  let s: CliSuite;
  cliSuite((suite) => (s = suite));
  afterAll(() => dirs.removeAll());

  it('TERM=dumb: plain progress lines without an escape sequence; TERM=xterm: the board redraws in place', { timeout: 120_000 }, async () => {
    for (const term of ['dumb', 'xterm']) {
      const folder = join(dirs.make(term), 'notes');
      mkdirSync(folder);
      for (let i = 0; i < 3; i++) writeFileSync(join(folder, `${term}-${i}.txt`), `${term} note ${i} about the curlew`);
      const out = await onTerminal(100, ['upload', folder, '--project', `t-${term}`, '--create-project', '--wait'], { ...s.env, TERM: term });
      expect(out).toContain('done: 3 files ready to search');
      if (term === 'dumb') {
        expect(out).not.toContain('\x1b');
        expect(out).toMatch(new RegExp(`notes/dumb-0\\.txt: ready \\(1 chunk\\)`));
      } else expect(out).toContain('\x1b[2K');
    }
  });
});
