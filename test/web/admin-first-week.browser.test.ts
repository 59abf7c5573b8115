/**
 * A team administrator's first week, walked in Chromium on one daemon that mails through a real MTA (postfix on
 * loopback): the first account from the setup link; a test mail; three invitations (one mistyped, one for a member);
 * they join from the link in the real mail, one sets a forgotten password; a group (one person invited into it from
 * its page), a project shared with it, a role changed, someone removed, an account disabled, and all of it in the audit
 * log; every page of the walk drawn at 390 px too.
 */
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import { type Delivered, type Postfix, postfixUnavailable, startPostfix } from '../helpers/postfix.js';
import { browserSuite, browserTitle, HAVE_CHROMIUM } from './browser.js';
import { pageProblems, SIZES } from './page-rules.js';

const noPostfix = postfixUnavailable();
const PASSWORD = 'correct horse battery staple';
const ADA = 'ada@example.com';
const BOB = 'bob@example.com';
const CAROL = 'carol@example.com';
const DAVE = 'dave@example.com';

describe.skipIf(!HAVE_CHROMIUM || noPostfix !== null)(browserTitle(`an admin's first week${noPostfix ? ` (skipped: ${noPostfix})` : ''}`), () => {
  let postfix: Postfix;
  // The daemon mails through postfix: its --smtp-url is added here, before browserSuite's hook starts the daemon.
  const args: string[] = [];
  beforeAll(async () => {
    postfix = await startPostfix();
    args.push('--smtp-url', postfix.url);
  });
  afterAll(async () => {
    await postfix?.stop();
  });
  const suite = browserSuite(args);
  const contexts: BrowserContext[] = [];
  /** The paths the walk saw, drawn again at 390 px at the end. */
  const seen = new Set<string>();
  let admin: Page;

  afterAll(async () => {
    for (const c of contexts) await c.close();
  });

  async function tab(): Promise<Page> {
    const context = await suite.browser.newContext({ viewport: SIZES.desk });
    contexts.push(context);
    return context.newPage();
  }
  const url = (path: string) => `${suite.d.url}${path}`;
  /** The words of the first match on the page as it is (after `press`, the page loaded): '' when there is none. */
  const textOf = async (page: Page, selector: string) => {
    const found = page.locator(selector).first();
    return (await found.count()) === 0 ? '' : ((await found.textContent()) ?? '').replace(/\s+/g, ' ').trim();
  };
  const flashOf = (page: Page) => textOf(page, 'main .flash');
  const note = (page: Page) => seen.add(new URL(page.url()).pathname);
  /** Clicks what sends a form (or follows a link) and waits for the page it leads to, the same URL or not. */
  async function press(page: Page, what: string | Locator): Promise<void> {
    await Promise.all([page.waitForEvent('framenavigated', (f) => f === page.mainFrame()), typeof what === 'string' ? page.click(what) : what.click()]);
    await page.waitForLoadState();
  }
  /** The link in the `nth` mail (from 0) to `to` whose subject starts so, once it is delivered. */
  async function linkIn(to: string, subject: string, path: string, nth = 0): Promise<string> {
    const mails = () => postfix.messages().filter((m) => m.to.includes(to) && m.subject.startsWith(subject));
    await postfix.waitFor(to, () => mails().length > nth);
    const mail: Delivered = mails()[nth]!;
    const m = new RegExp(`${suite.d.url.replace(/[.]/g, '\\.')}${path}\\?token=[\\w-]+`).exec(mail.text);
    if (!m) throw new Error(`no ${path} link in the mail to ${to}:\n${mail.text}`);
    return m[0];
  }
  async function invite(emails: string): Promise<void> {
    await admin.goto(url('/admin/users'));
    await admin.fill('form[action="/admin/users/invite"] [name=email]', emails);
    await press(admin, 'form[action="/admin/users/invite"] button[type=submit]');
  }
  const openInvites = async () => (await admin.locator('table.invites tbody tr td:first-child').allTextContents()).sort();

  it('day 1: the first account from the setup link; a refused try says what is wrong as a sentence', { timeout: 60_000 }, async () => {
    admin = await tab();
    await admin.goto(suite.d.setupUrl!);
    // One word for one thing: every other page says "E-mail".
    expect.soft(await textOf(admin, 'form[action="/setup"] label:has(input[name=email])')).toBe('E-mail');
    await admin.fill('input[name=email]', ADA);
    // The browser holds minlength; a short password from a form without it is the server's refusal.
    await admin.evaluate(`document.querySelectorAll('input[minlength]').forEach((i) => i.removeAttribute('minlength'))`);
    await admin.fill('input[name=password]', 'short');
    await admin.fill('input[name=password2]', 'short');
    await press(admin, 'button[type=submit]');
    expect.soft(await textOf(admin, 'p.error')).toBe('Password must be at least 8 characters.');
    await admin.fill('input[name=password]', PASSWORD);
    await admin.fill('input[name=password2]', PASSWORD);
    await press(admin, 'button[type=submit]');
    await admin.waitForURL(url('/documents'));
    await admin.click('nav.top >> text=Admin');
    await admin.waitForURL(url('/admin/users'));
    note(admin);
  });

  it('day 1: a test mail reaches the admin', { timeout: 60_000 }, async () => {
    await admin.click('nav.sub >> text=Mail');
    await admin.waitForURL(url('/admin/mail'));
    await press(admin, 'button:has-text("Send me a test mail")');
    await admin.waitForURL(url('/admin/mail'));
    expect(await flashOf(admin)).toBe(`Queued a test mail to ${ADA}: it shows below as sent once the mail server has taken it.`);
    await postfix.waitFor(ADA, (m) => m.subject.startsWith('docsearch test mail'));
    note(admin);
  });

  it('day 2: three invitations, one mistyped and one for a member: what went out is not said as an error, the typo is refused whole', { timeout: 60_000 }, async () => {
    // "carol@example,com": a comma typed for a dot. Split there, "carol@example" was invited and mailed.
    await invite(`${BOB}\ncarol@example,com\n${ADA}`);
    expect.soft(await textOf(admin, '#invite-done')).toBe(`Mailed an invitation to ${BOB}.`);
    const refusal = await textOf(admin, '#invite ~ p.error');
    expect.soft(refusal).toBe(`Not invited: carol@example,com: "carol@example,com" is not an e-mail address; ${ADA}: an account with the e-mail ${ADA} exists already.`);
    expect.soft(refusal).not.toContain('Mailed');
    expect.soft(await admin.inputValue('form[action="/admin/users/invite"] [name=email]')).toBe(`carol@example,com\n${ADA}`);
    expect.soft(await openInvites()).toEqual([BOB]);

    // Invited again (say the first mail was lost): the admin is told the first link is dead.
    const first = await linkIn(BOB, 'You are invited', '/invite');
    await invite(BOB);
    expect.soft(await flashOf(admin)).toMatch(new RegExp(`^Mailed an invitation to ${BOB}\\. The earlier invitation for ${BOB} \\(made \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\) is replaced: its link no longer works\\.$`));
    const second = await linkIn(BOB, 'You are invited', '/invite', 1);
    expect(second).not.toBe(first);
    await invite(CAROL);
    expect.soft(await openInvites()).toEqual([BOB, CAROL]);
    note(admin);

    const bob = await tab();
    await bob.goto(first);
    expect(await textOf(bob, 'h1')).toBe('Invitation link not valid');
  });

  it('day 2: they join from the link in the mail, and are told their account is made', { timeout: 60_000 }, async () => {
    const bob = await tab();
    await bob.goto(await linkIn(BOB, 'You are invited', '/invite', 1));
    note(bob);
    await bob.fill('input[name=password]', PASSWORD);
    await bob.fill('input[name=password2]', `${PASSWORD}!`);
    await press(bob, 'button:has-text("Create account")');
    expect(await textOf(bob, 'p.error')).toBe('The passwords do not match.');
    await bob.fill('input[name=password]', PASSWORD);
    await bob.fill('input[name=password2]', PASSWORD);
    await press(bob, 'button:has-text("Create account")');
    await bob.waitForURL(url('/'));
    expect.soft(await flashOf(bob)).toBe(`Welcome: your account ${BOB} is made, and you are signed in.`);

    const carol = await tab();
    await carol.goto(await linkIn(CAROL, 'You are invited', '/invite'));
    await carol.fill('input[name=password]', PASSWORD);
    await carol.fill('input[name=password2]', PASSWORD);
    await press(carol, 'button:has-text("Create account")');
    await carol.waitForURL(url('/'));
    expect.soft(await flashOf(carol)).toBe(`Welcome: your account ${CAROL} is made, and you are signed in.`);
  });

  it('day 3: Carol forgot her password: the mailed link sets a new one', { timeout: 60_000 }, async () => {
    const carol = await tab();
    await carol.goto(url('/login'));
    await carol.click('text=Forgot password?');
    await carol.waitForURL(url('/forgot-password'));
    note(carol);
    await carol.fill('input[name=email]', CAROL);
    await press(carol, 'button:has-text("Mail me a link")');
    expect(await textOf(carol, 'main [role=status]')).toContain('a link to set a new password is on its way');
    await carol.goto(await linkIn(CAROL, 'Set a new docsearch password', '/reset-password'));
    note(carol);
    await carol.fill('input[name=password]', 'a brand new password');
    await carol.fill('input[name=password2]', 'a brand new password');
    await press(carol, 'button:has-text("Set password")');
    await carol.waitForURL(url('/login'));
    await carol.fill('input[name=email]', CAROL);
    await carol.fill('input[name=password]', 'a brand new password');
    await press(carol, 'button[type=submit]');
    await carol.waitForURL(url('/'));
  });

  it('day 4: a group: made (and said so), an empty one says what to do, a person without an account is invited into it from its page', { timeout: 90_000 }, async () => {
    await admin.goto(url('/admin/groups'));
    note(admin);
    await admin.fill('form[action="/admin/groups"] input[name=name]', 'editors');
    await press(admin, 'button:has-text("Create group")');
    await admin.waitForURL(/\/admin\/groups\/grp_\w+$/);
    const groupPath = new URL(admin.url()).pathname;
    note(admin);
    expect.soft(await flashOf(admin)).toBe("Made the group editors. Add its members here, then share projects with group:editors on a project's Sharing tab.");
    expect.soft(await textOf(admin, '#member-count')).toBe('No members yet: add people below.');
    for (const email of [BOB, CAROL]) {
      await admin.fill('#add-member input[name=email]', email);
      await press(admin, 'button:has-text("Add to group")');
      await admin.waitForURL(url(groupPath));
      expect(await flashOf(admin)).toBe(`Added ${email} to editors.`);
    }
    // Dave has no account: the refusal offers his invitation into this group, and the form comes filled in.
    await admin.fill('#add-member input[name=email]', DAVE);
    await press(admin, 'button:has-text("Add to group")');
    expect(await textOf(admin, 'p.error')).toBe(`Account ${DAVE} not found.`);
    await press(admin, `#invite-instead a:has-text("Invite ${DAVE} into editors")`);
    await admin.waitForURL((u) => u.pathname === '/admin/users');
    expect(await admin.inputValue('form[action="/admin/users/invite"] [name=email]')).toBe(DAVE);
    expect(await admin.locator('form[action="/admin/users/invite"] select[name=group] option:checked').textContent()).toBe('editors');
    expect(await admin.locator('main p.error').count()).toBe(0);
    await press(admin, 'form[action="/admin/users/invite"] button[type=submit]');
    await admin.waitForLoadState();
    expect(await flashOf(admin)).toBe(`Mailed an invitation to ${DAVE}.`);
    expect(await textOf(admin, `table.invites tr:has-text("${DAVE}") td[data-label=Gives]`)).toBe('group editors');
    const dave = await tab();
    await dave.goto(await linkIn(DAVE, 'You are invited', '/invite'));
    await dave.fill('input[name=password]', PASSWORD);
    await dave.fill('input[name=password2]', PASSWORD);
    await press(dave, 'button:has-text("Create account")');
    await dave.waitForURL(url('/'));
    await admin.goto(url(groupPath));
    expect((await admin.locator('table.members tbody td:first-child').allTextContents()).sort()).toEqual([BOB, CAROL, DAVE]);
    expect(await textOf(admin, '#member-count')).toBe('3 members');
  });

  it('day 5: a project shared with the group, a role changed, someone removed, an account disabled; the audit log has all of it', { timeout: 90_000 }, async () => {
    await admin.goto(url('/projects'));
    await admin.fill('form[action="/projects"] input[name=name]', 'Handbook');
    await press(admin, 'form[action="/projects"] button[type=submit]');
    await admin.waitForURL(/\/projects\/prj_\w+$/);
    await admin.click('nav.tabs >> text=Sharing');
    await admin.waitForURL(/\/sharing$/);
    note(admin);
    await admin.fill('#share-form input[name=member]', 'group:editors');
    await admin.selectOption('#share-form select[name=role]', 'viewer');
    await press(admin, '#share-form button:has-text("Share")');
    expect(await flashOf(admin)).toBe('Shared with the group editors as viewer.');
    await admin.fill('#share-form input[name=member]', CAROL);
    await admin.selectOption('#share-form select[name=role]', 'viewer');
    await press(admin, '#share-form button:has-text("Share")');
    const row = admin.locator('table.members tr', { hasText: CAROL });
    await row.locator('select[name=role]').selectOption('editor');
    await Promise.all([admin.waitForEvent('framenavigated'), row.locator('button:has-text("Change")').click()]);
    expect(await flashOf(admin)).toBe(`${CAROL} is now an editor.`);

    await admin.goto(url('/admin/groups'));
    await admin.click('a.group-name:has-text("editors")');
    await Promise.all([admin.waitForEvent('framenavigated'), admin.locator('tr', { hasText: DAVE }).locator('button:has-text("Remove")').click()]);
    expect(await flashOf(admin)).toBe(`Removed ${DAVE} from editors: they lost what was shared with it.`);

    await admin.goto(url('/admin/users'));
    // Disabling revokes keys and connected apps for good: it asks first, saying so, and Cancel changes nothing.
    await press(admin, admin.locator('tr', { hasText: BOB }).locator('a:has-text("Disable")'));
    note(admin);
    expect(await textOf(admin, 'h1')).toBe(`Disable ${BOB}?`);
    expect(await textOf(admin, '#disable-effect')).toContain('revoked for good');
    await press(admin, 'main a:has-text("Cancel")');
    expect(new URL(admin.url()).pathname).toBe('/admin/users');
    expect(await textOf(admin, `tr:has-text("${BOB}") td[data-label=Status]`)).toBe('active');
    await press(admin, admin.locator('tr', { hasText: BOB }).locator('a:has-text("Disable")'));
    await press(admin, 'button:has-text("Disable account")');
    expect(await flashOf(admin)).toBe(`Disabled ${BOB}: ended 1 web session, revoked 0 API keys and 0 connected apps.`);

    await admin.click('nav.sub >> text=Audit log');
    await admin.waitForURL(url('/admin/audit'));
    note(admin);
    const events = await admin.locator('#audit-events tbody td[data-label=Event]').allTextContents();
    for (const type of ['account.created', 'account.invited', 'password_reset.completed', 'group.created', 'group.member_added', 'project.shared', 'group.member_removed', 'account.disabled', 'mail.sent']) {
      expect(events, type).toContain(type);
    }
    expect(events.filter((t) => t === 'account.created')).toHaveLength(4);
    // Every link the log shows goes somewhere.
    for (const href of new Set(await admin.locator('main a[href]').evaluateAll((as) => as.map((a) => (a as unknown as { href: string }).href)))) {
      const res = await admin.request.get(href);
      expect(res.status(), href).toBe(200);
    }
    // "What else happened to Bob?": his name in the log leads to every event about him (his account, invitations, mail:
    // the Target filter wanted an id the page shows nowhere), and Ada's to every event she caused.
    const disabledRow = admin.locator('#audit-events tbody tr').filter({ has: admin.locator('td[data-label=Event] code', { hasText: /^account\.disabled$/ }) });
    await press(admin, disabledRow.locator('td[data-label=What] a'));
    expect(await admin.inputValue('input[name=target]')).toBe(BOB);
    const about = await admin.locator('#audit-events tbody td[data-label=What]').allTextContents();
    for (const what of about) expect(what.replace(/\s+/g, ' ').trim()).toMatch(new RegExp(`^(account|invitation|mail) ${BOB.replace('.', '\\.')}$`));
    expect(await admin.locator('#audit-events tbody td[data-label=Event]').allTextContents()).toEqual(expect.arrayContaining(['account.disabled', 'account.created', 'account.invited', 'mail.sent']));
    await press(admin, disabledRow.locator('td[data-label=Who] a'));
    expect(await admin.inputValue('input[name=actor]')).toBe(ADA);
    const by = await admin.locator('#audit-events tbody td[data-label=Who]').allTextContents();
    expect(by.length).toBeGreaterThan(0);
    for (const who of by) expect(who.trim().startsWith(ADA), who).toBe(true);
  });

  it('every page of the walk, at 390 px: nothing breaks the design rules or axe', { timeout: 120_000 }, async () => {
    const phone = await admin.context().browser()!.newContext({ viewport: SIZES.phone, storageState: await admin.context().storageState() });
    contexts.push(phone);
    const page = await phone.newPage();
    const problems: string[] = [];
    // The walk's pages, and the two Admin pages it did not need (a new admin opens them too).
    const paths = [...new Set([...seen, '/admin/sharing', '/admin/sources'])].filter((p) => !['/invite', '/reset-password', '/forgot-password'].includes(p));
    expect(paths.length).toBeGreaterThanOrEqual(8);
    for (const path of paths) {
      const res = await page.goto(url(path));
      expect(res!.status(), path).toBe(200);
      problems.push(...(await pageProblems(page)).map((p) => `${path}: ${p}`));
    }
    // The signed-out pages (an invitation and a reset link are used up: their "not valid" pages stand in).
    const out = await (await admin.context().browser()!.newContext({ viewport: SIZES.phone })).newPage();
    contexts.push(out.context());
    for (const path of ['/forgot-password', '/invite?token=used', '/reset-password?token=used']) {
      await out.goto(url(path));
      problems.push(...(await pageProblems(out)).map((p) => `${path}: ${p}`));
    }
    expect(problems).toEqual([]);
  });
});
