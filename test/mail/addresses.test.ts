/**
 * Which e-mail addresses docsearch takes for mail (src/auth/accounts.ts `isEmailAddress`): an invitation, an admin's
 * test mail, a new account. What no mail server would take, or what would make a mail go elsewhere (a second
 * address after a comma, a display name, a line break that starts another header), is refused before anything is
 * queued, and an identity provider's e-mail that is not one makes no account; the addresses that work
 * (plus-addressing, IDN domains, a quoted mailbox name) are kept. A real postfix on loopback shows where the mail goes.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, runCli, startDaemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { type Postfix, postfixUnavailable, startPostfix } from '../helpers/postfix.js';

const noPostfix = postfixUnavailable();

/** Addresses that are not one mailbox a mail server would take, each with what is wrong. */
const NOT_ADDRESSES: [string, string][] = [
  ['bob@example.com;', 'trailing punctuation'],
  ['bob@example.com,', 'trailing comma'],
  ['x,evil@example.com', 'a list: "x" and evil@example.com'],
  ['bob;evil@example.com', 'a list split by a semicolon'],
  ['Bob<bob@example.com>', 'a display name'],
  ['<bob@example.com>', 'angle brackets'],
  ['bob@example.com>', 'a stray bracket'],
  ['bo b@example.com', 'a space'],
  ['bob@exa mple.com', 'a space in the domain'],
  ['bob@bob@example.com', 'two @'],
  ['bob@example.com\r\nBcc: evil@example.com', 'a header after CR LF'],
  ['bob@example.com\nBcc: evil@example.com', 'a header after LF'],
  ['bob@example.com.', 'a trailing dot'],
  ['.bob@example.com', 'a leading dot'],
  ['bob..smith@example.com', 'two dots in a row'],
  ['bob@-example.com', 'a label starting with a hyphen'],
  ['bob@exa_mple.com', 'an underscore in the domain'],
  ['bob@ex%41mple.com', 'a percent-escape in the domain'],
  ['b\u202eob@example.com', 'a bidirectional override'],
  ['bob@', 'no domain'],
  ['@example.com', 'no mailbox'],
];

/** Addresses that work and must stay accepted. */
const ADDRESSES = ['bob+docs@example.com', "o'brien@example.ie", 'jörg@bücher.example', 'user@xn--bcher-kva.example', '"quoted"@example.com', 'admin@localhost', 'First.Last@Sub.Example.CO.UK'];

describe.skipIf(noPostfix !== null)(`e-mail addresses${noPostfix ? ` (skipped: ${noPostfix})` : ''}`, () => {
  let d: Daemon;
  let postfix: Postfix;
  let admin: TestUser;

  beforeAll(async () => {
    postfix = await startPostfix();
    d = await startDaemon({ args: ['--smtp-url', postfix.url] });
    admin = await addUser(d, { email: 'admin@example.com' });
  });

  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    await postfix?.stop();
  });

  it('refuses an invitation to what is not one address, and invites the addresses that work', async () => {
    const res = await api(d, '/api/v1/admin/invitations', { token: admin.apiKey, body: { emails: [...NOT_ADDRESSES.map(([a]) => a), ...ADDRESSES], send: true } });
    expect(res.status, JSON.stringify(res.body)).toBe(207);
    const refused = new Map((res.body.refused as { email: string; error: string }[]).map((r) => [r.email, r.error]));
    for (const [address, what] of NOT_ADDRESSES) {
      expect(refused.get(address.trim()) ?? 'invited', `${what}: ${JSON.stringify(address)}`).toMatch(/is not an e-mail address|must not contain U\+/);
    }
    expect(res.body.invitations.map((i: { email: string }) => i.email).sort()).toEqual([...ADDRESSES].sort());
    // Each invitation made is mailed to its address, and nothing to anyone else (nodemailer lowercases the domain
    // and drops needless quotes, as mail servers compare them).
    await waitFor(() => postfix.messages().length >= ADDRESSES.length, 30_000, 'every invitation delivered');
    expect(postfix.messages().map((m) => m.to).sort()).toEqual(['bob+docs@example.com', "o'brien@example.ie", 'jörg@bücher.example', 'user@xn--bcher-kva.example', 'quoted@example.com', 'admin@localhost', 'First.Last@sub.example.co.uk'].sort());
  });

  it("refuses an admin's test mail to what is not one address with a 400 naming body.to, and sends nothing", async () => {
    for (const [address, what] of NOT_ADDRESSES) {
      const res = await api(d, '/api/v1/admin/mail/test', { token: admin.apiKey, body: { to: address } });
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', message: 'body.to: is not an email address' });
    }
    const ok = await api(d, '/api/v1/admin/mail/test', { token: admin.apiKey, body: { to: 'jörg@bücher.example' } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
    await postfix.waitFor('jörg@bücher.example', (m) => m.subject.startsWith('docsearch test mail'));
    // The one test mail queued is the one to the good address; no mail went anywhere else.
    const outbox = await api(d, '/api/v1/admin/mail?limit=200', { token: admin.apiKey });
    expect(outbox.body.mail.filter((m: { kind: string }) => m.kind === 'test').map((m: { to: string }) => m.to)).toEqual(['jörg@bücher.example']);
    expect(postfix.messages().filter((m) => m.subject.startsWith('docsearch test mail')).map((m) => m.to)).toEqual(['jörg@bücher.example']);
  });

  it('refuses to make an account (docsearch users add) for what is not one address', async () => {
    for (const address of ['bob@example.com;', 'x,evil@example.com', 'Bob<bob@example.com>']) {
      const res = await runCli(['users', 'add', address, '--data-dir', d.dataDir], { input: 'correct horse battery staple\n', env: d.env });
      expect(res.code, `${address}: ${res.stderr}`).not.toBe(0);
      expect(res.stderr).toContain(`${JSON.stringify(address)} is not an e-mail address`);
    }
    const made = await runCli(['users', 'add', 'bob+docs@example.com', '--data-dir', d.dataDir], { input: 'correct horse battery staple\n', env: d.env });
    expect(made.code, made.stderr).toBe(0);
  });
});

describe('an identity provider that sends what is not one address', () => {
  /** The forward-auth proxy's address (--trust-proxy), a loopback address of its own. */
  const PROXY = '127.0.0.2';
  let d: Daemon;

  beforeAll(async () => {
    d = await startDaemon({ args: ['--trusted-header-login', '--trust-proxy', PROXY, '--sso-name', 'Authelia'] });
  });

  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
  });

  /** A page asked for through the proxy, which names the person in its headers. */
  const throughProxy = (headers: Record<string, string>) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(new URL('/projects', d.url), { localAddress: PROXY, headers: { accept: 'text/html', ...headers } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });

  it('makes no account for it, and says why', async () => {
    for (const email of ['ann@example.org;', 'x,evil@example.org', 'Ann <ann@example.org>']) {
      const res = await throughProxy({ 'Remote-User': 'ann', 'Remote-Email': email });
      expect(res.status, email).toBe(403);
      expect(res.body).toContain('which is not an e-mail address');
    }
    const users = JSON.parse((await runCli(['users', 'list', '--json', '--data-dir', d.dataDir], { env: d.env })).stdout).users as { email: string }[];
    expect(users).toEqual([]);
    expect((await throughProxy({ 'Remote-User': 'ann', 'Remote-Email': 'ann+docs@example.org' })).status).toBe(200);
  });
});
