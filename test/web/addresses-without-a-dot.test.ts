/**
 * An address whose domain has no dot ("carol@example": a comma or a dot left out) is refused wherever an address is
 * taken — the setup link, an invitation (Admin → Users, the admin API, `docsearch admin users invite`, the operator's
 * `docsearch users invite`), Settings → Account's e-mail change, `docsearch users add` — with a sentence saying what
 * is wrong, and nothing is made or mailed. `localhost` stays taken: mail to it is delivered on the machine itself
 * (test/mail/addresses.test.ts mails one). The setup link survives the refusal.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv } from '../cli/cli-env.js';
import { addUser, api, type Daemon, runCli, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { WebClient } from '../server/web-client.js';
import { loggedIn } from './library-client.js';

const DOTLESS = 'carol@example';
const WHY = `"${DOTLESS}" is not an e-mail address: the domain after the @, "example", has no dot (as in example.com)`;
const PASSWORD = 'correct horse battery staple';
const alertOf = (page: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(page)?.[1]?.replace(/&quot;/g, '"') ?? null;

describe('addresses whose domain has no dot', () => {
  let d: Daemon;
  let admin: TestUser;
  daemonForSuite((started) => {
    d = started;
  });

  it('the setup link: refused, said on the page, and the link still makes the first account', async () => {
    const web = new WebClient(d);
    const link = new URL(d.setupUrl!);
    const token = link.searchParams.get('token')!;
    await web.get(link.pathname + link.search);
    const refused = await web.post('/setup', { _csrf: web.csrf, token, email: DOTLESS, password: PASSWORD, password2: PASSWORD });
    expect(refused.status).toBe(400);
    expect(alertOf(refused.text)).toBe(`${WHY}.`);
    expect(refused.text).toContain(`name="email" value="${DOTLESS}"`);
    const made = await web.post('/setup', { _csrf: web.csrf, token, email: 'first@example.com', password: PASSWORD, password2: PASSWORD });
    expect(made.status, made.text.slice(0, 2000)).toBe(302);
  });

  it('an invitation: the Admin → Users form, the admin API, both CLIs; nothing made', async () => {
    admin = await addUser(d);
    const promoted = await runCli(['users', 'set-admin', admin.email, '--data-dir', d.dataDir], { env: d.env });
    expect(promoted.code, promoted.stderr).toBe(0);

    const web = await loggedIn(d, admin);
    await web.get('/admin/users');
    const form = await web.submit('/admin/users/invite', { _csrf: web.csrf, email: DOTLESS, role: 'member', group: '' });
    expect(form.status).toBe(400);
    expect(alertOf(form.text)).toBe(`${WHY}.`);

    const viaApi = await api(d, '/api/v1/admin/invitations', { token: admin.apiKey, body: { emails: [DOTLESS, 'root@localhost', 'ops@Example.COM'], send: false } });
    expect(viaApi.status, JSON.stringify(viaApi.body)).toBe(207);
    expect(viaApi.body.refused).toEqual([{ email: DOTLESS, error: WHY }]);
    expect(viaApi.body.invitations.map((i: { email: string }) => i.email)).toEqual(['root@localhost', 'ops@Example.COM']);

    const client = await runCli(['admin', 'users', 'invite', DOTLESS, '--server', d.url], { env: cliEnv(null, { DOCSEARCH_TOKEN: admin.apiKey }) });
    expect(client.code, client.stderr).toBe(1);
    expect(client.stderr).toContain(`not invited ${DOTLESS}: ${WHY}`);

    const operator = await runCli(['users', 'invite', DOTLESS, '--data-dir', d.dataDir], { env: d.env });
    expect(operator.code).toBe(1);
    expect(operator.stderr).toContain(WHY);

    const open = await api(d, '/api/v1/admin/invitations', { token: admin.apiKey });
    expect(open.body.invitations.map((i: { email: string }) => i.email).sort()).toEqual(['ops@Example.COM', 'root@localhost']);
  });

  it("Settings → Account: a new e-mail without a dot in its domain is refused, the account's stays", async () => {
    const user = await addUser(d);
    const web = await loggedIn(d, user);
    await web.get('/settings/account');
    const res = await web.submit('/settings/account/email', { _csrf: web.csrf, email: DOTLESS, password: user.password });
    expect(res.status).toBe(400);
    expect(res.text).toContain(`${WHY}.`.replace(/"/g, '&quot;'));
    expect((await api(d, '/api/v1/me', { token: user.apiKey })).body.email).toBe(user.email);
  });

  it('docsearch users add refuses it', async () => {
    const res = await runCli(['users', 'add', DOTLESS, '--data-dir', d.dataDir], { input: `${PASSWORD}\n`, env: d.env });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(WHY);
  });
});
