/**
 * Issue 52's acceptance in Chromium: an authenticator app set up and used to sign in (a wrong or reused code refused,
 * a recovery code working once), and a passkey — Chromium's virtual authenticator over CDP, as real browsers run
 * WebAuthn — set up, used as the second factor, then to sign in alone.
 *
 * Passkeys need a host name (not an IP address) on https or localhost: this daemon's public URL is
 * http://localhost:<port>, and the browser goes there.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type BrowserContext, type CDPSession, chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, CHROMIUM, CHROMIUM_ARGS, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { freePort } from '../helpers/ports.js';
import { totpCode } from '../auth/two-factor/totp.js';
import { axeViolations, browserTitle, HAVE_CHROMIUM, watchCsp } from './browser.js';

describe.skipIf(!HAVE_CHROMIUM)(browserTitle('two-factor sign-in and passkeys'), () => {
  let d: Daemon;
  let browser: Browser;
  let base: string;
  let admin: TestUser;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://localhost:${port}`;
    d = await startDaemon({ args: ['--port', String(port), '--public-url', base] });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    admin = await addUser(d);
  });
  afterAll(async () => {
    await browser?.close();
    if (!d) return;
    expect(await d.stop()).toBe(0);
    removeDir(d.dataDir);
  });

  async function signInWithPassword(page: Page, user: TestUser): Promise<void> {
    await page.goto(`${base}/login`);
    await page.fill('input[name=email]', user.email);
    await page.fill('input[name=password]', user.password);
    await page.click('form[action="/login"] button[type=submit]');
  }

  async function signOut(page: Page): Promise<void> {
    await page.click('header button:has-text("Sign out")');
    await page.waitForURL(`${base}/login`);
  }

  async function typeCode(page: Page, code: string): Promise<void> {
    await page.fill('input[name=code]', code);
    await page.click('form[action="/login/verify"] button[type=submit]');
  }

  it('sets up an authenticator app, then signs in with password and code; a wrong or reused code is refused; a recovery code works once', async () => {
    const user = await addUser(d);
    const context = await browser.newContext();
    const csp: string[] = [];
    const page = watchCsp(await context.newPage(), csp);
    try {
      await signInWithPassword(page, user);
      await page.waitForURL(`${base}/`);
      await page.click('nav.top >> text=Settings');
      await page.click('nav.sub >> text=Security');
      await page.waitForURL(`${base}/settings/security`);
      await page.click('button:has-text("Set up an authenticator app")');
      await page.waitForSelector('img.qr');
      expect(await page.locator('img.qr').evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
      expect(await axeViolations(page)).toEqual([]);
      const secret = (await page.locator('#totp-secret').textContent())!;
      const enrolCode = totpCode(secret);
      await page.fill('input[name=code]', enrolCode);
      await page.click('button:has-text("Turn on")');
      await page.waitForSelector('#recovery-codes');
      const recovery = await page.locator('#recovery-codes code').allTextContents();
      expect(recovery).toHaveLength(10);
      expect(await page.locator('#totp-status').textContent()).toContain('On.');
      await signOut(page);

      await signInWithPassword(page, user);
      await page.waitForURL(/\/login\/verify/);
      await typeCode(page, enrolCode === '000000' ? '000001' : '000000');
      expect(await page.locator('[role=alert]').textContent()).toContain('That code is not valid');
      await typeCode(page, enrolCode);
      expect(await page.locator('[role=alert]').textContent()).toContain('a code works once');
      await typeCode(page, totpCode(secret, 1));
      await page.waitForURL(`${base}/`);
      expect(await page.locator('header .who').textContent()).toBe(user.email);
      await signOut(page);

      await signInWithPassword(page, user);
      await page.waitForURL(/\/login\/verify/);
      await typeCode(page, recovery[0]!);
      await page.waitForURL(`${base}/`);
      await signOut(page);
      await signInWithPassword(page, user);
      await page.waitForURL(/\/login\/verify/);
      await typeCode(page, recovery[0]!);
      expect(await page.locator('[role=alert]').textContent()).toContain('That code is not valid');
      expect(page.url()).toContain('/login/verify');
      expect(csp).toEqual([]);
    } finally {
      await context.close();
    }
  });

  /** A browser with Chromium's virtual authenticator: a platform one with user verification, as a laptop's. */
  async function withAuthenticator(): Promise<{ context: BrowserContext; page: Page; credentials: () => Promise<unknown[]>; cdp: CDPSession; authenticatorId: string }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    return { context, page, cdp, authenticatorId, credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials };
  }

  it('adds a passkey with the virtual authenticator: recovery codes come with it, it signs in alone at once; after the password when chosen', async () => {
    const user = await addUser(d);
    const { context, page, credentials } = await withAuthenticator();
    const csp: string[] = [];
    watchCsp(page, csp);
    try {
      await signInWithPassword(page, user);
      await page.waitForURL(`${base}/`);
      await page.goto(`${base}/settings/security`);
      await page.fill('#passkey-register input[name=name]', 'Work laptop');
      expect(await page.isChecked('#passkey-register input[name=alone]')).toBe(true);
      await page.click('#passkey-register button[type=submit]');
      await page.waitForSelector('#passkeys');
      expect(await page.locator('#passkeys tbody tr').count()).toBe(1);
      expect(await page.locator('#passkeys').textContent()).toContain('Work laptop');
      expect(await credentials()).toHaveLength(1);
      // The first second factor comes with recovery codes, shown once, to download or print (#62 item 2).
      expect(await page.locator('#recovery-codes code').count()).toBe(10);
      expect(await page.locator('#download-codes').getAttribute('download')).toBe('docsearch-recovery-codes.txt');
      expect(await page.locator('button[data-print]').isVisible()).toBe(true);
      expect(await page.locator('.flash').textContent()).toContain('It signs you in without your password.');
      // Named again from its row.
      await page.click('#passkeys summary:has-text("Rename")');
      await page.fill('#passkeys input[name=name]', 'Laptop');
      await page.click('#passkeys button:has-text("Save")');
      await page.waitForSelector('text=Renamed the passkey to “Laptop”.');
      await signOut(page);

      // Alone, at once: no e-mail, no password (#62 item 8) — through the sign-in page's autofill request, which the
      // virtual authenticator answers as a person picks the passkey from the e-mail field's suggestions.
      await page.waitForURL(`${base}/`);
      expect(await page.locator('header .who').textContent()).toBe(user.email);
      await page.goto(`${base}/settings/security`);
      expect(await page.locator('#sessions tr.current').textContent()).toContain('with passkey');

      // Chosen otherwise: after the password, as the second factor.
      await page.check('input[name=sign_in][value=second-factor]');
      await page.click('form[action="/settings/security/passkey-sign-in"] button[type=submit]');
      await page.waitForSelector('text=Your passkeys now sign you in after your password.');
      await signOut(page);
      await page.click('#passkey-sign-in button[type=submit]');
      await expect.poll(() => page.locator('#passkey-sign-in [role=alert]').textContent()).toContain('sign in with your e-mail and password first');
      await signInWithPassword(page, user);
      await page.waitForURL(/\/login\/verify/);
      await page.click('#passkey-second-factor button[type=submit]');
      await page.waitForURL(`${base}/`);
      expect(csp).toEqual([]);

      const events = await api(d, `/api/v1/audit-events?type=sign_in.succeeded&actor=${encodeURIComponent(user.email)}`, { token: admin.apiKey });
      expect(events.body.events.map((e: { details: { method: string } }) => e.details.method)).toEqual(['password+passkey', 'passkey', 'password']);
    } finally {
      await context.close();
    }
  });

  it('a passkey-only account gets recovery codes, and signs in with one once its passkey is gone from the authenticator (#62 item 2)', async () => {
    const user = await addUser(d);
    const { context, page, credentials, cdp, authenticatorId } = await withAuthenticator();
    try {
      await signInWithPassword(page, user);
      await page.waitForURL(`${base}/`);
      await page.goto(`${base}/settings/security`);
      await page.fill('#passkey-register input[name=name]', 'Only laptop');
      await page.click('#passkey-register button[type=submit]');
      await page.waitForSelector('#recovery-codes');
      const codes = await page.locator('#recovery-codes code').allTextContents();
      expect(codes).toHaveLength(10);
      expect(await page.locator('#recovery-left').textContent()).toContain('10 of 10 left.');

      // The laptop is lost: the authenticator no longer holds the passkey (cleared first: while it does, the sign-in
      // page's passkey suggestion would sign straight back in).
      await cdp.send('WebAuthn.clearCredentials', { authenticatorId });
      expect(await credentials()).toHaveLength(0);
      await signOut(page);
      await signInWithPassword(page, user);
      await page.waitForURL(/\/login\/verify/);
      // The second step offers the passkey first, its recovery codes one click away (no cursor in a code field).
      expect(await page.locator('#passkey-second-factor button.primary').isVisible()).toBe(true);
      expect(await page.locator('input[name=code]').isVisible()).toBe(false);
      await page.click('#use-recovery-code summary');
      await typeCode(page, codes[3]!);
      await page.waitForURL(`${base}/`);
      expect(await page.locator('header .who').textContent()).toBe(user.email);
      await page.goto(`${base}/settings/security`);
      expect(await page.locator('#recovery-left').textContent()).toContain('9 of 10 left.');
      expect(await page.locator('#sessions tr.current').textContent()).toContain('with password and recovery code');
    } finally {
      await context.close();
    }
  });

  it('sudo mode: past its window a new key, a new passkey and new recovery codes ask for the password or a passkey again, through the pages', async () => {
    const user = await addUser(d);
    const { context, page } = await withAuthenticator();
    const csp: string[] = [];
    watchCsp(page, csp);
    /** The session's last proof (its sign-in, or a confirmation), 16 minutes ago: past the 15 of sudo mode's window. */
    const age = () => {
      const db = new Database(join(d.dataDir, 'docsearch.db'));
      try {
        db.prepare('UPDATE sessions SET confirmed_at = confirmed_at - ? WHERE user_id = (SELECT id FROM users WHERE email = ?)').run(16 * 60_000, user.email);
      } finally {
        db.close();
      }
    };
    try {
      await signInWithPassword(page, user);
      await page.waitForURL(`${base}/`);
      // Fresh from signing in: a key is made at once.
      await page.goto(`${base}/settings/keys`);
      await page.fill('input[name=name]', 'first');
      await page.click('button:has-text("Generate new API key")');
      await page.waitForSelector('#new-key');

      age();
      await page.goto(`${base}/settings/keys`);
      await page.fill('input[name=name]', 'deploy');
      await page.click('button:has-text("Generate new API key")');
      expect(await page.locator('h1').textContent()).toBe('Confirm access');
      expect(await page.locator('#confirm-access').textContent()).toContain('To make a new API key, confirm it is you');
      await page.fill('#confirm-access input[name=password]', 'not the password');
      await page.click('#confirm-access button:has-text("Confirm")');
      expect(await page.locator('[role=alert]').textContent()).toContain('The current password is not right.');
      await page.fill('#confirm-access input[name=password]', user.password);
      await page.click('#confirm-access button:has-text("Confirm")');
      // The waiting form goes on by itself (the browser posts it again): the key named "deploy" is made.
      await page.waitForSelector('#new-key');
      expect(await page.locator('table.keys').textContent()).toContain('deploy');

      // Adding a passkey past the window: to Confirm access, and back.
      age();
      await page.goto(`${base}/settings/security`);
      await page.fill('#passkey-register input[name=name]', 'Laptop');
      await page.click('#passkey-register button[type=submit]');
      await page.waitForURL(/\/settings\/confirm\?return_to=/);
      await page.fill('#confirm-access input[name=password]', user.password);
      await page.click('#confirm-access button:has-text("Confirm")');
      await page.waitForURL(/\/settings\/security/);
      await page.fill('#passkey-register input[name=name]', 'Laptop');
      await page.click('#passkey-register button[type=submit]');
      await page.waitForSelector('#recovery-codes');

      // New recovery codes past the window: a passkey confirms too.
      age();
      await page.goto(`${base}/settings/security`);
      await page.click('button:has-text("Make new codes")');
      expect(await page.locator('h1').textContent()).toBe('Confirm access');
      await page.click('#passkey-confirm button[type=submit]');
      await page.waitForURL(/\/settings\/security/);
      await page.click('button:has-text("Make new codes")');
      await page.waitForSelector('#recovery-codes');
      expect(csp).toEqual([]);
      const confirmed = await api(d, `/api/v1/audit-events?type=session.confirmed&actor=${encodeURIComponent(user.email)}`, { token: admin.apiKey });
      expect(confirmed.body.events.map((e: { details: { method: string } }) => e.details.method)).toEqual(['passkey', 'password', 'password']);
    } finally {
      await context.close();
    }
  });

  it('the sign-in page offers passkeys in the e-mail field’s suggestions, and a password still signs in beside it', async () => {
    const user = await addUser(d);
    const { context, page } = await withAuthenticator();
    try {
      await page.goto(`${base}/login`);
      expect(await page.locator('input[name=email]').getAttribute('autocomplete')).toBe('username webauthn');
      // The background ceremony that waits for a suggested passkey does not stand in the password's way.
      await signInWithPassword(page, user);
      await page.waitForURL(`${base}/`);
    } finally {
      await context.close();
    }
  });
});
