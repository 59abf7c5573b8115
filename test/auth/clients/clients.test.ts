import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeDir, runCli } from '../../helpers/daemon.js';

/** The operator command `docsearch clients add`, against a fresh data directory (no daemon needed; the first makes the library, --init). */
describe('docsearch clients add', () => {
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-clients-'));
  afterAll(() => removeDir(dir));

  it('prints client_id and the secret once on stdout, notices on stderr', async () => {
    const res = await runCli(['clients', 'add', '--name', 'Ops App', '--redirect-uri', 'https://ops.example.com/cb', '--redirect-uri', 'http://127.0.0.1:8080/cb', '--data-dir', dir, '--init']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^client_id: app_[0-9a-z]{9}[0-9A-Za-z]{12}\nclient_secret: dscs_[0-9A-Za-z]{43}\n$/);
    expect(res.stderr).toContain('registered confidential client "Ops App"');
    expect(res.stderr).toContain('the client secret is shown once');
  });

  it('registers a public client without a secret', async () => {
    const res = await runCli(['clients', 'add', '--name', 'Desktop', '--redirect-uri', 'com.example.desktop:/oauth', '--public', '--data-dir', dir]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^client_id: app_\S+\n$/);
    expect(res.stderr).toContain('public client: no secret; PKCE (S256) is required');
  });

  it('refuses a missing or unsafe redirect URI with a clear message', async () => {
    const none = await runCli(['clients', 'add', '--name', 'X', '--data-dir', dir]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('error: at least one --redirect-uri is required');
    const http = await runCli(['clients', 'add', '--name', 'X', '--redirect-uri', 'http://example.com/cb', '--data-dir', dir]);
    expect(http.code).toBe(1);
    expect(http.stderr).toContain('error: redirect URI "http://example.com/cb" must use https (http is allowed only for 127.0.0.1, [::1] and localhost)');
    expect(http.stdout).toBe('');
  });
});
