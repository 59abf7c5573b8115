/**
 * Sign-in with an OpenID Provider from a real browser (Debian's Chromium), the provider being oidc-provider on https
 * with a private CA that the daemon trusts through NODE_EXTRA_CA_CERTS: the web pages, `docsearch login` and an MCP
 * client's OAuth flow all pass through the same login page and its "Sign in with …" button.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, CHROMIUM, CHROMIUM_ARGS, type Daemon, removeDir, runCli, type TestUser } from '../../helpers/daemon.js';
import { startIdp, type TestIdp } from '../../helpers/oidc-provider.js';
import { freePort } from '../../helpers/ports.js';
import { uploadFiles } from '../../ingest/pipeline/helpers.js';
import { HostProvider } from '../../mcp/host-provider.js';
import { call } from '../../mcp/mcp-client.js';
import { startCliLogin } from '../../cli/browser-login.js';
import { cliEnv } from '../../cli/cli-env.js';
import { browserTitle, HAVE_CHROMIUM } from '../../web/browser.js';
import { PROVIDER_NAME, registerDaemons, ssoDaemon } from './sso-flow.js';

const MARKER = 'The lighthouse keeper logs the fog horn test every second Tuesday.';

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('sign-in with an OpenID Provider'), () => {
  let idp: TestIdp;
  let d: Daemon;
  let browser: Browser;
  let owner: TestUser;
  let project: string;
  let docId: string;

  beforeAll(async () => {
    idp = await startIdp();
    d = await ssoDaemon(idp, ['--sso-admin-group', 'docs-admins']);
    registerDaemons(idp, [d]);
    idp.accounts.set('nina', { email: 'nina@example.org', email_verified: true, name: 'Nina', groups: ['engineering', 'docs-admins'] });
    owner = await addUser(d); // the first account: an admin from the start
    project = (await api(d, '/api/v1/projects', { token: owner.apiKey, body: { name: 'Harbour' } })).body.id;
    const up = await uploadFiles(d, owner.apiKey, [{ name: 'lighthouse.txt', bytes: Buffer.from(`Harbour operations\n\n${MARKER}\n`) }], { projectId: project, query: '?wait=true' });
    expect(up.status).toBe(200);
    docId = up.body.documents[0].id;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    if (d) {
      expect(await d.stop()).toBe(0);
      removeDir(d.dataDir);
    }
    await idp?.stop();
  });

  /** A browser of its own (no cookies yet); the provider's certificate comes from the test's CA, which it does not know. */
  const newBrowser = (): Promise<BrowserContext> => browser.newContext({ ignoreHTTPSErrors: true });

  /** On our login page: "Sign in with …", the provider's sign-in and consent, back at docsearch. */
  async function throughProvider(page: Page, login: string): Promise<void> {
    await page.click('#sso');
    await page.waitForURL((u) => u.origin === idp.issuer);
    await page.fill('input[name=login]', login);
    await page.fill('input[name=password]', 'any password');
    const signInPage = page.url();
    await page.click('button[type=submit]');
    await page.waitForURL((u) => u.href !== signInPage);
    if (new URL(page.url()).origin === idp.issuer) await page.click('button:has-text("Continue")');
    await page.waitForURL((u) => u.origin !== idp.issuer);
  }

  it('signs in: the account is made, its groups share projects, the admin group makes an admin; a group lost at the provider is lost at the next sign-in', { timeout: 120_000 }, async () => {
    const context = await newBrowser();
    try {
      const page = await context.newPage();
      await page.goto(`${d.url}/projects`);
      await page.waitForURL(/\/login\?return_to=/);
      expect(await page.textContent('#sso')).toBe(`Sign in with ${PROVIDER_NAME}`);
      await throughProvider(page, 'nina');
      await page.waitForURL(`${d.url}/projects`);
      expect(await page.textContent('.who')).toBe('nina@example.org');
      // Admin, through the mapped group.
      expect(await page.locator('nav.top a[href="/admin"]').count()).toBe(1);
      // The owner shares Harbour with the provider's group "engineering": Nina reads it.
      const share = await api(d, `/api/v1/projects/${project}/members`, { token: owner.apiKey, body: { group: 'engineering', role: 'viewer' } });
      expect(share.status, JSON.stringify(share.body)).toBe(201);
      const seen = await page.goto(`${d.url}/projects/${project}`);
      expect(seen?.status()).toBe(200);
      expect(await page.textContent('h1')).toContain('Harbour');
      // The group, on the admin pages: the provider's, read-only.
      await page.goto(`${d.url}/admin/groups`);
      expect(await page.textContent('body')).toContain(`from ${PROVIDER_NAME}`);

      // Signing out signs out at the provider too (it asks to confirm), and comes back to our login page.
      await page.click('button:has-text("Sign out")');
      await page.waitForURL((u) => u.origin === idp.issuer);
      await page.click('button:has-text("Yes, sign me out")');
      await page.waitForURL(`${d.url}/login`);

      // At the provider, Nina leaves engineering and docs-admins: the next sign-in takes both away.
      idp.accounts.set('nina', { email: 'nina@example.org', email_verified: true, groups: ['support'] });
      await page.goto(`${d.url}/login`);
      await throughProvider(page, 'nina');
      await page.waitForURL(`${d.url}/`);
      expect((await page.goto(`${d.url}/projects/${project}`))?.status()).toBe(404);
      expect(await page.locator('nav.top a[href="/admin"]').count()).toBe(0);
      const users = JSON.parse((await runCli(['users', 'list', '--json', '--data-dir', d.dataDir], { env: d.env })).stdout).users as { email: string; admin: boolean }[];
      expect(users.filter((u) => u.email === 'nina@example.org')).toEqual([expect.objectContaining({ admin: false })]);
    } finally {
      await context.close();
    }
  });

  it('`docsearch login` signs in through the provider in the browser, then `docsearch search` reads a project shared with the group', { timeout: 120_000 }, async () => {
    idp.accounts.set('omar', { email: 'omar@example.org', email_verified: true, groups: ['lighthouse-crew'] });
    const crew = await api(d, `/api/v1/projects/${project}/members`, { token: owner.apiKey, body: { group: 'lighthouse-crew', role: 'viewer' } });
    // The group does not exist until someone of it signs in: sharing waits for that (404 now).
    expect(crew.status).toBe(404);

    const env = cliEnv(null);
    const login = await startCliLogin(d, env);
    const context = await newBrowser();
    try {
      const page = await context.newPage();
      await page.goto(login.authorizeUrl);
      await page.waitForURL(/\/login\?return_to=/);
      await throughProvider(page, 'omar');
      // Back at the authorize URL: docsearch's own consent for the CLI, when it asks.
      await page.waitForURL((u) => u.pathname === '/api/oauth/authorize' || u.port !== new URL(d.url).port);
      if (new URL(page.url()).pathname === '/api/oauth/authorize') await page.click('#approve');
      expect(await login.exited, login.stderr()).toBe(0);
    } finally {
      await context.close();
      login.kill();
    }
    expect(login.stderr()).toContain(`Logged in to ${d.url} as omar@example.org (browser login`);

    // Omar reads nothing of Harbour yet. Now the group exists (the provider's): the owner shares the project with it,
    // and Omar's CLI searches it.
    const before = await runCli(['search', '--json', 'when is the fog horn tested'], { env });
    expect(before.code, before.stderr).toBe(0);
    expect(JSON.parse(before.stdout).results.map((r: { document: { id: string } }) => r.document.id)).not.toContain(docId);
    const share = await api(d, `/api/v1/projects/${project}/members`, { token: owner.apiKey, body: { group: 'lighthouse-crew', role: 'viewer' } });
    expect(share.status, JSON.stringify(share.body)).toBe(201);
    const found = await runCli(['search', '--json', 'when is the fog horn tested'], { env });
    expect(found.code, found.stderr).toBe(0);
    expect(JSON.parse(found.stdout).results.map((r: { document: { id: string } }) => r.document.id)).toContain(docId);
  });

  it("an MCP client's OAuth flow signs in through the provider and searches", { timeout: 120_000 }, async () => {
    idp.accounts.set('pia', { email: 'pia@example.org', email_verified: true, groups: ['engineering'] });
    const host = new HostProvider(`http://127.0.0.1:${await freePort()}/callback`);
    const first = new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), { authProvider: host });
    await expect(new Client({ name: 'sso-assistant', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    const context = await newBrowser();
    let code: string | null = null;
    try {
      const page = await context.newPage();
      // The assistant's callback: the browser lands there with the code (nothing else needs to listen).
      await page.route(`${host.redirectUrl}**`, async (route) => {
        code = new URL(route.request().url()).searchParams.get('code');
        await route.fulfill({ contentType: 'text/html', body: '<title>done</title>' });
      });
      await page.goto(host.authorizationUrl!.href);
      await page.waitForURL(/\/login\?return_to=/);
      await throughProvider(page, 'pia');
      await page.waitForURL((u) => u.pathname === '/api/oauth/authorize');
      expect(await page.textContent('h1')).toContain('Test Assistant');
      await page.click('#approve');
      await page.waitForURL(`${host.redirectUrl}**`);
    } finally {
      await context.close();
    }
    expect(code).toMatch(/^[0-9A-Za-z]{64}$/);
    await first.finishAuth(code!);
    // Harbour is shared with Pia's group from the provider (a new share, or the one made above).
    const share = await api(d, `/api/v1/projects/${project}/members`, { token: owner.apiKey, body: { group: 'engineering', role: 'viewer' } });
    expect([200, 201], JSON.stringify(share.body)).toContain(share.status);
    const client = new Client({ name: 'sso-assistant', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), { authProvider: host }));
    try {
      const found = await call(client, 'search', { query: 'fog horn lighthouse keeper', mode: 'keyword' });
      expect(found.results.map((r: { document_id: string }) => r.document_id)).toContain(docId);
    } finally {
      await client.close();
    }
  });
});
