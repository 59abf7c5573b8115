import { execFileSync } from 'node:child_process';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addUser, api, BIN, type Daemon, REPO, runCli, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { cliEnv } from './cli-env.js';
import { missingFile } from '../helpers/requirement.js';

/**
 * The committed completion scripts in real interactive shells, in tmux: TAB is pressed and the screen read, so what
 * the shell inserts (quoting included) is what is checked. Each shell is skipped when it is not installed.
 */
/** One tmux server per shell started (its own socket), so one ending never races the next starting. */
const tmux = (socket: string, ...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });

const SHELLS = {
  bash: { bin: '/usr/bin/bash', start: 'bash --norc --noprofile', load: `source ${join(REPO, 'completions/docsearch.bash')}` },
  zsh: { bin: '/usr/bin/zsh', start: 'zsh -f', load: `autoload -U compinit && compinit -u && source ${join(REPO, 'completions/_docsearch')}` },
  fish: { bin: '/usr/bin/fish', start: 'fish --no-config', load: `source ${join(REPO, 'completions/docsearch.fish')}` },
} as const;

describe.skipIf(missingFile('/usr/bin/tmux', 'apt-get install -y tmux') !== null)('completion in real shells (issue 21, item 8)', () => {
  let d: Daemon;
  let user: TestUser;
  let docId: string;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey });
    for (const name of ['Q3 reports', 'paper trail']) expect((await runCli(['projects', 'create', name], { env })).code).toBe(0);
    const form = new FormData();
    form.append('file', new Blob(['A note about completion of document ids.\n']), 'note.txt');
    const up = await fetch(`${d.url}/api/v1/upload`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
    docId = ((await up.json()) as { documents: Array<{ id: string }> }).documents[0]!.id;
    expect((await api(d, '/api/v1/keys', { token: user.apiKey, body: { name: 'deploy bot' } })).status).toBe(201);
  }, { cleanExit: false });

  /** Starts `shell` in tmux with the completion loaded, types `line`, presses TAB and returns the screen once it settles. */
  async function tab(shell: keyof typeof SHELLS, line: string, expected: string): Promise<string> {
    const s = SHELLS[shell];
    const bin = mkdtempSync(join(tmpdir(), 'docsearch-path-'));
    symlinkSync(BIN, join(bin, 'docsearch'));
    const env = { ...cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey }), PATH: `${bin}:${process.env.PATH}`, TERM: 'xterm' };
    const session = `docsearch-${shell}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const exports = Object.entries(env).map(([k, v]) => `${k}='${v}'`).join(' ');
    tmux(session, 'new-session', '-d', '-x', '200', '-y', '20', '-s', session, `env ${exports} ${s.start}`);
    try {
      tmux(session, 'send-keys', '-t', session, s.load, 'Enter');
      tmux(session, 'send-keys', '-t', session, 'clear', 'Enter');
      await new Promise((r) => setTimeout(r, 500));
      tmux(session, 'send-keys', '-t', session, '-l', line);
      tmux(session, 'send-keys', '-t', session, 'Tab');
      let screen = '';
      for (let i = 0; i < 100 && !screen.includes(expected); i++) {
        await new Promise((r) => setTimeout(r, 200));
        screen = tmux(session, 'capture-pane', '-p', '-t', session);
      }
      return screen;
    } finally {
      tmux(session, 'kill-server');
    }
  }

  for (const shell of Object.keys(SHELLS) as Array<keyof typeof SHELLS>) {
    it.skipIf(missingFile(SHELLS[shell].bin, `apt-get install -y ${shell}`) !== null)(`${shell}: a project name with a space is inserted quoted; --project=pa completes`, { timeout: 120_000 }, async () => {
      expect(await tab(shell, 'docsearch projects show Q', 'show Q3\\ reports')).toContain('docsearch projects show Q3\\ reports');
      expect(await tab(shell, 'docsearch upload a.txt --project=pa', '--project=paper')).toContain('docsearch upload a.txt --project=paper\\ trail');
    });
  }

  it('bash: inside a quote the user opened, document ids, key names and --json fields', { timeout: 120_000 }, async () => {
    expect(await tab('bash', "docsearch projects rename 'Q", "'Q3 reports'")).toContain("docsearch projects rename 'Q3 reports'");
    expect(await tab('bash', `docsearch documents show ${docId.slice(0, 6)}`, docId)).toContain(`docsearch documents show ${docId}`);
    expect(await tab('bash', 'docsearch keys revoke dep', 'deploy')).toContain('docsearch keys revoke deploy\\ bot');
    expect(await tab('bash', 'docsearch documents list --json sha', 'sha256')).toContain('docsearch documents list --json sha256');
    expect(await tab('bash', 'docsearch projects list --json=id,docu', 'document_count')).toContain('--json=id,document_count');
  });
});
