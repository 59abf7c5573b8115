/**
 * The operator commands that cannot be undone ask first, as the client's `docsearch admin users disable` does
 * (docs/operations.md, "Administration"): on a terminal they ask, and "no" changes nothing; elsewhere they need
 * --yes, and without it exit 2 naming what would be done, having done nothing. `users disable` (its keys and
 * connected apps are revoked for good) and `users reset-2fa` (second factors deleted) join `users delete` and
 * `groups delete`, which asked already (test/admin/team-commands.test.ts).
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, BIN, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { missingFile } from '../helpers/requirement.js';
import { loggedIn } from '../server/web-client.js';
import { enrolTotp } from '../auth/two-factor/totp.js';

const DISABLE = 'It is signed out everywhere, and its API keys and connected apps are revoked for good (enabling it again does not bring them back).';
const RESET = 'Authenticator apps, recovery codes and passkeys are deleted for good and web sessions end; the password alone signs in until a new one is set up.';
const NO_SCRIPT = missingFile('/usr/bin/script', 'apt-get install -y bsdutils');

describe('operator commands that cannot be undone ask first', () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon();
    await addUser(d); // the first account: the admin, so that the others may be disabled
  }, 120_000);
  afterAll(async () => {
    if (!d) return;
    expect(await d.stop()).toBe(0);
    removeDir(d.dataDir);
  });

  const op = (...args: string[]) => runCli([...args, '--data-dir', d.dataDir], { env: d.env });
  const works = async (u: TestUser) => (await api(d, '/api/v1/me', { token: u.apiKey })).status;

  /** The command on a pseudo-terminal (util-linux `script`), answering the question it asks with `answer`. */
  async function onTerminal(args: string[], question: string, answer: string): Promise<{ code: number | null; out: string }> {
    // Wide enough that the question is on one line.
    const cmd = `stty cols 400 rows 60; ${[process.execPath, BIN, ...args, '--data-dir', d.dataDir].join(' ')}`;
    const proc = spawn('script', ['-qefc', cmd, '/dev/null'], { env: { ...process.env, ...d.env, CI: '' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    await expect.poll(() => out, { timeout: 60_000 }).toContain(question);
    proc.stdin.write(`${answer}\r`);
    const code = await new Promise<number | null>((r) => proc.once('close', r));
    return { code, out };
  }

  it('users disable: off a terminal it needs --yes, and without it disables nothing', { timeout: 120_000 }, async () => {
    const bob = await addUser(d);
    const asked = await op('users', 'disable', bob.email);
    expect(asked.code).toBe(2);
    expect(asked.stderr).toBe(`error: not on a terminal, so not asking: add --yes to disable the account ${bob.email}\nhint: ${DISABLE}\n`);
    expect(await works(bob)).toBe(200);
    expect(JSON.parse((await op('users', 'list', '--json')).stdout).users.find((u: { email: string }) => u.email === bob.email).disabled).toBe(false);

    const done = await op('users', 'disable', bob.email, '--yes');
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toBe(`disabled ${bob.email}; ended 0 web sessions, revoked 1 API key and 0 connected apps\n`);
    expect(await works(bob)).toBe(401);
    // An unknown account is named before anything is asked.
    expect((await op('users', 'disable', 'nobody@example.com')).stderr).toBe('error: account nobody@example.com not found\n');
  });

  it.skipIf(NO_SCRIPT !== null)('users disable on a terminal asks; no keeps the account, yes disables it', { timeout: 180_000 }, async () => {
    const kim = await addUser(d);
    const question = `Disable the account ${kim.email}? ${DISABLE}`;
    const no = await onTerminal(['users', 'disable', kim.email], question, 'n');
    expect(no.code).toBe(1);
    expect(no.out).toContain('error: cancelled');
    expect(await works(kim)).toBe(200);
    const yes = await onTerminal(['users', 'disable', kim.email], question, 'y');
    expect(yes.code, yes.out).toBe(0);
    expect(yes.out).toContain(`disabled ${kim.email}; ended 0 web sessions, revoked 1 API key`);
    expect(await works(kim)).toBe(401);
  });

  it('users reset-2fa: off a terminal it needs --yes for an account with a second factor, and for --all', { timeout: 180_000 }, async () => {
    const ann = await addUser(d);
    const web = await loggedIn(d, ann);
    await enrolTotp(web);
    const asked = await op('users', 'reset-2fa', ann.email);
    expect(asked.code).toBe(2);
    expect(asked.stderr).toBe(`error: not on a terminal, so not asking: add --yes to remove the second factors of ${ann.email}\nhint: ${RESET}\n`);
    expect((await web.get('/settings/keys')).status, 'the session did not end').toBe(200);
    const all = await op('users', 'reset-2fa', '--all');
    expect(all.code).toBe(2);
    expect(all.stderr).toBe(`error: not on a terminal, so not asking: add --yes to remove every account's second factors\nhint: ${RESET}\n`);
    expect((await web.get('/settings/keys')).status, 'the session did not end').toBe(200);

    // What was asked about was all still there.
    const done = await op('users', 'reset-2fa', ann.email, '--yes');
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toBe(`reset ${ann.email}: removed authenticator app, 10 recovery codes; signed out 1 web session\n`);
    expect((await web.get('/settings/keys')).location).toMatch(/^\/login/);
    // Nothing to lose, nothing asked.
    const none = await op('users', 'reset-2fa', ann.email);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stderr).toBe(`${ann.email} has no second factor: nothing to reset\n`);
  });
});
