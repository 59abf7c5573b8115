/**
 * Issue 52's acceptance in Chromium: an authenticator app set up and used to sign in (a wrong or reused code refused,
 * a recovery code working once), and a passkey — Chromium's virtual authenticator over CDP, as real browsers run
 * WebAuthn — set up, used as the second factor, then to sign in alone.
 *
 * Passkeys need a host name (not an IP address) on https or localhost: this daemon's public URL is
 * http://localhost:<port>, and the browser goes there.
 */
import { type BrowserContext, chromium, type Browser, type Page } from 'playwright-core';
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
  async function withAuthenticator(): Promise<{ context: BrowserContext; page: Page; credentials: () => Promise<unknown[]> }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    return { context, page, credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials };
  }

  it('adds a passkey with the virtual authenticator, uses it after the password, then signs in with it alone', async () => {
    const user = await addUser(d);
    const { context, page, credentials } = await withAuthenticator();
    const csp: string[] = [];
    watchCsp(page, csp);
    try {
      await signInWithPassword(page, user);
      await page.waitForURL(`${base}/`);
      await page.goto(`${base}/settings/security`);
      await page.fill('#passkey-register input[name=name]', 'Work laptop');
      await page.click('#passkey-register button[type=submit]');
      await page.waitForSelector('#passkeys');
      expect(await page.locator('#passkeys tbody tr').count()).toBe(1);
      expect(await page.locator('#passkeys').textContent()).toContain('Work laptop');
      expect(await credentials()).toHaveLength(1);
      // Named again from the list.
      await page.fill('#passkeys input[name=name]', 'Laptop');
      await page.click('#passkeys button:has-text("Rename")');
      await page.waitForSelector('text=Renamed the passkey to “Laptop”.');
      await signOut(page);

      // As the second factor: the password, then the passkey.
      await signInWithPassword(page, user);
      await page.waitForURL(/\/login\/verify/);
      await page.click('#passkey-second-factor button[type=submit]');
      await page.waitForURL(`${base}/`);
      // Alone is the account's choice, not yet made: the passkey alone is refused.
      await signOut(page);
      await page.click('#passkey-sign-in button[type=submit]');
      await expect.poll(() => page.locator('#passkey-sign-in [role=alert]').textContent()).toContain('sign in with your email and password first');

      await signInWithPassword(page, user);
      await page.click('#passkey-second-factor button[type=submit]');
      await page.waitForURL(`${base}/`);
      await page.goto(`${base}/settings/security`);
      await page.check('input[name=sign_in][value=alone]');
      await page.click('form[action="/settings/security/passkey-sign-in"] button[type=submit]');
      await page.waitForSelector('text=Your passkeys now sign you in without your password.');
      await signOut(page);

      // Alone: no e-mail, no password.
      await page.click('#passkey-sign-in button[type=submit]');
      await page.waitForURL(`${base}/`);
      expect(await page.locator('header .who').textContent()).toBe(user.email);
      await page.goto(`${base}/settings/security`);
      expect(await page.locator('#sessions tr.current').textContent()).toContain('with passkey');
      expect(csp).toEqual([]);

      const events = await api(d, `/api/v1/audit-events?type=sign_in.succeeded&actor=${encodeURIComponent(user.email)}`, { token: admin.apiKey });
      expect(events.body.events.map((e: { details: { method: string } }) => e.details.method)).toEqual(['passkey', 'password+passkey', 'password+passkey', 'password']);
    } finally {
      await context.close();
    }
  });
});
