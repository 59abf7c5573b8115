/**
 * The operator commands that make something a script needs (an account and its key, an invitation link, a group, an
 * OAuth client) print it as JSON with `--json` — theirs or the program's, wherever it stands — and nothing else:
 * no notice on stderr to parse around. What they print works against the running daemon.
 */
import { describe, expect, it } from 'vitest';
import { post } from '../auth/oauth-flow.js';
import { api, type Daemon, runCli } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';

const DAY = 24 * 3600_000;

describe('operator commands with --json', () => {
  let d: Daemon;
  daemonForSuite((started) => {
    d = started;
  });
  const cli = async (args: string[], input = '') => {
    const res = await runCli([...args, '--data-dir', d.dataDir], { input, env: d.env });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toBe('');
    return JSON.parse(res.stdout);
  };

  it('users add --api-key --json: the account and its key, which works', async () => {
    const made = await cli(['users', 'add', 'ci@example.com', '--api-key', '--scopes', 'read:documents', '--key-expires', '30d', '--json'], 'correct horse battery staple\n');
    expect(made.user).toEqual({ id: expect.stringMatching(/^usr_/), email: 'ci@example.com' });
    expect(made.api_key).toMatchObject({ id: expect.stringMatching(/^key_/), name: 'provisioned', scopes: ['read:documents'] });
    expect(Date.parse(made.api_key.expires_at) - Date.now()).toBeGreaterThan(29 * DAY);
    const listed = await api(d, '/api/v1/keys', { token: made.api_key.key });
    expect(listed.status).toBe(200);
    expect(listed.body.keys.map((k: { id: string }) => k.id)).toEqual([made.api_key.id]);
  });

  it("the program's --json before the command does the same; without --api-key the key is null", async () => {
    const made = await cli(['--json', 'users', 'add', 'plain@example.com'], 'correct horse battery staple\n');
    expect(made).toEqual({ user: { id: expect.stringMatching(/^usr_/), email: 'plain@example.com' }, api_key: null });
    const listed = await cli(['users', 'list', '--json']);
    expect(listed.users.map((u: { id: string }) => u.id)).toContain(made.user.id);
  });

  it('users invite --json: the link, which opens the invitation, and when it expires', async () => {
    const invited = await cli(['users', 'invite', 'newcomer@example.com', '--json']);
    expect(invited.email).toBe('newcomer@example.com');
    expect(invited.url.startsWith(`${d.url}/invite?token=`)).toBe(true);
    expect(Math.abs(Date.parse(invited.expires_at) - Date.now() - 7 * DAY)).toBeLessThan(60_000);
    const page = await fetch(invited.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('newcomer@example.com');
  });

  it('groups create --json: the group, as groups list names it', async () => {
    const made = await cli(['groups', 'create', 'legal', '--description', 'Legal team', '--json']);
    expect(made.group).toEqual({ id: expect.stringMatching(/^grp_/), name: 'legal', description: 'Legal team' });
    const listed = await cli(['groups', 'list', '--json']);
    expect(listed.groups.find((g: { name: string }) => g.name === 'legal').id).toBe(made.group.id);
  });

  it('clients add --json: the client and its secret, which the token endpoint accepts (a wrong one it refuses)', async () => {
    const made = await cli(['clients', 'add', '--name', 'Notes app', '--redirect-uri', 'https://notes.example.com/cb', '--json']);
    expect(made).toMatchObject({ client_name: 'Notes app', redirect_uris: ['https://notes.example.com/cb'] });
    const exchange = (secret: string) => post(d, '/api/oauth/token', { grant_type: 'authorization_code', code: 'no-such-code', redirect_uri: 'https://notes.example.com/cb' }, { basic: [made.client_id, secret] });
    expect((await exchange(made.client_secret)).body.error).toBe('invalid_grant');
    expect((await exchange(`${made.client_secret}x`)).body.error).toBe('invalid_client');
    const open = await cli(['clients', 'add', '--name', 'Desktop app', '--redirect-uri', 'http://127.0.0.1:8765/cb', '--public', '--json']);
    expect(open.client_secret).toBeNull();
  });
});
