import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type TestUser } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { ARTIFACTS, axeViolations, browserSuite, browserTitle, HAVE_CHROMIUM, watchCsp } from './browser.js';

const PASSWORD = 'correct horse battery staple';
const CAROL = 'carol@example.com';

/**
 * A team as an admin runs it, in Chromium: invite a person (the link shown once), who sets a password and is signed
 * in; a group with them in it; a project shared with the group; they see it under "Shared with me" and find its
 * document; disabled, they are out at their next page and their API key answers 401.
 */
describe.skipIf(!HAVE_CHROMIUM)(browserTitle('Admin: invite, group, share, disable'), () => {
  const suite = browserSuite();
  let admin: TestUser;
  let handbookId: string;
  const cspErrors: string[] = [];
  const audited: Record<string, string[]> = {};

  beforeAll(async () => {
    admin = await addUser(suite.d); // the first account: the admin
    const project = await api(suite.d, '/api/v1/projects', { token: admin.apiKey, body: { name: 'handbook' } });
    handbookId = project.body.id;
    const up = await uploadFiles(suite.d, admin.apiKey, [{ name: 'leave.txt', bytes: Buffer.from('Parental leave: sixteen weeks at full pay, to be taken within the first year.\n') }], {
      projectId: handbookId,
      query: '?wait=true',
    });
    expect(up.body.documents.map((doc: { status: string }) => doc.status)).toEqual(['ready']);
  });

  async function signedIn(context: BrowserContext, email: string): Promise<Page> {
    const page = watchCsp(await context.newPage(), cspErrors);
    await page.goto(`${suite.d.url}/login`);
    await page.fill('input[name=email]', email);
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(`${suite.d.url}/`);
    return page;
  }

  async function capture(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
    audited[name] = await axeViolations(page);
  }

  it('an admin invites, groups and shares; the person joins, finds the document; disabled, they are out', { timeout: 180_000 }, async () => {
    const { d, browser } = suite;
    const adminContext = await browser.newContext();
    const carolContext = await browser.newContext();
    try {
      const page = await signedIn(adminContext, admin.email);

      // Admin, through the navigation: Users, and an invitation whose link is shown once.
      await page.click('nav.top >> text=Admin');
      await page.waitForURL(`${d.url}/admin/users`);
      expect(await page.locator('nav.sub[aria-label=Admin] a.active').textContent()).toBe('Users');
      expect(await page.locator('tr', { hasText: admin.email }).textContent()).toContain('admin');
      await page.fill('form[action="/admin/users/invite"] [name=email]', CAROL);
      await page.click('form[action="/admin/users/invite"] button[type=submit]');
      await page.waitForSelector('#invite-link');
      const link = await page.inputValue('#invite-link');
      expect(await page.locator('button.copy[data-copy-target="invite-link"]').count()).toBe(1);
      expect(link).toMatch(new RegExp(`^${d.url}/invite\\?token=[\\w-]{43}$`));
      await capture(page, 'admin-01-users-invited');
      await page.goto(`${d.url}/admin/users`);
      expect(await page.locator('#invite-link').count()).toBe(0);
      expect(await page.content()).not.toContain(link.split('token=')[1]);
      expect(await page.locator('table.invites').textContent()).toContain(CAROL);

      // Carol opens the link, sets a password and lands signed in.
      const carol = watchCsp(await carolContext.newPage(), cspErrors);
      await carol.goto(link);
      expect(await carol.locator('#invite-email').textContent()).toBe(CAROL);
      await capture(carol, 'admin-02-invite');
      await carol.fill('input[name=password]', PASSWORD);
      await carol.fill('input[name=password2]', PASSWORD);
      await carol.click('button:has-text("Create account")');
      await carol.waitForURL(`${d.url}/`);
      expect(await carol.locator('header .who').textContent()).toBe(CAROL);
      // Not an admin: no Admin link, and the Admin pages refuse her.
      expect(await carol.locator('nav.top >> text=Admin').count()).toBe(0);
      const refused = await carol.goto(`${d.url}/admin/users`);
      expect(refused!.status()).toBe(403);
      expect(await carol.locator('h1').textContent()).toBe('Admins only');
      // The link worked once.
      await carol.goto(link);
      expect(await carol.locator('h1').textContent()).toBe('Invitation link not valid');

      // The admin makes a group and puts Carol in it.
      await page.click('nav.sub >> text=Groups');
      await page.waitForURL(`${d.url}/admin/groups`);
      await page.fill('form[action="/admin/groups"] input[name=name]', 'team');
      await page.fill('form[action="/admin/groups"] textarea[name=description]', 'Everyone');
      await page.click('button:has-text("Create group")');
      await page.waitForURL(/\/admin\/groups\/grp_\w+$/);
      await page.fill('#add-member input[name=email]', CAROL);
      await page.click('button:has-text("Add to group")');
      await page.waitForSelector('.flash');
      expect(await page.locator('.flash').textContent()).toBe(`Added ${CAROL} to team.`);
      expect(await page.locator('table.members').textContent()).toContain(CAROL);
      await capture(page, 'admin-03-group');

      // … and shares the handbook with the group, as viewer, on the project's Sharing tab.
      await page.goto(`${d.url}/projects/${handbookId}`);
      await page.click('nav.tabs >> text=Sharing');
      await page.waitForURL(/\/sharing$/);
      await page.fill('#share-form input[name=member]', 'group:team');
      await page.selectOption('#share-form select[name=role]', 'viewer');
      await page.click('#share-form button:has-text("Share")');
      await page.waitForSelector('.flash');
      expect(await page.locator('.flash').textContent()).toBe('Shared with the group team as viewer.');
      // A member's Change sits beside its role select, not under it (#62 Low).
      const row = page.locator('table.members tr', { hasText: 'group: team' });
      const select = (await row.locator('select[name=role]').boundingBox())!;
      const change = (await row.locator('button:has-text("Change")').boundingBox())!;
      expect(Math.abs(select.y + select.height / 2 - (change.y + change.height / 2))).toBeLessThan(4);
      expect(change.x).toBeGreaterThan(select.x + select.width);

      // Carol sees it under "Shared with me", and finds its document in web search.
      await carol.goto(`${d.url}/projects`);
      const shared = carol.locator('table[aria-label="Shared with me"]');
      expect(await shared.locator('a.project-name').textContent()).toBe('handbook');
      expect(await shared.locator('.shared-by').textContent()).toBe(`shared by ${admin.email}`);
      await carol.goto(`${d.url}/search?q=${encodeURIComponent('how long is parental leave')}`);
      expect(await carol.locator('ol.results a.filename').first().textContent()).toBe('leave.txt');

      // Carol makes an API key; it reads the shared project.
      await carol.goto(`${d.url}/settings/keys`);
      await carol.click('button:has-text("Generate new API key")');
      const key = await carol.inputValue('#new-key');
      const listed = await api(d, '/api/v1/projects', { token: key });
      expect(listed.status).toBe(200);
      expect(listed.body.projects.map((p: { name: string; role: string }) => [p.name, p.role])).toContainEqual(['handbook', 'viewer']);

      // The admin disables her: her next page load is the login page, her key answers 401.
      await page.goto(`${d.url}/admin/users`);
      await page.locator('tr', { hasText: CAROL }).locator('a:has-text("Disable")').click();
      await page.waitForURL(/\/admin\/users\/usr_\w+\/disable$/);
      await page.click('button:has-text("Disable account")');
      await page.waitForSelector('.flash');
      expect(await page.locator('.flash').textContent()).toBe(`Disabled ${CAROL}: ended 1 web session, revoked 1 API key and 0 connected apps.`);
      expect(await page.locator('tr', { hasText: CAROL }).textContent()).toContain('disabled');
      await carol.goto(`${d.url}/projects`);
      await carol.waitForURL(/\/login\?return_to=%2Fprojects$/);
      expect((await api(d, '/api/v1/projects', { token: key })).status).toBe(401);

      expect(cspErrors).toEqual([]);
      for (const [name, violations] of Object.entries(audited)) expect(violations, name).toEqual([]);
    } finally {
      await adminContext.close();
      await carolContext.close();
    }
  });
});
