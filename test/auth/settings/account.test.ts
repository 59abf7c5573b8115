import { describe, expect, it } from 'vitest';
import { addUser, type Daemon, runCli, type TestUser } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { WebClient } from '../../server/web-client.js';

/** Settings → Account (change password, change email) and `docsearch users set-password`, on SQLite or PostgreSQL. */
describe('Settings → Account and users set-password', () => {
  let d: Daemon;
  // Each test browses from an address of its own (X-Forwarded-For), so the wrong passwords it sends on purpose
  // count against its own login budget only.
  daemonForSuite(
    (started) => {
      d = started;
    },
    { args: ['--trust-proxy'] },
  );
  let address = 0;
  const from = (ip: string): WebClient => {
    const web = new WebClient(d);
    web.headers['x-forwarded-for'] = ip;
    return web;
  };
  const signedIn = async (user: TestUser, ip: string): Promise<WebClient> => {
    const web = from(ip);
    expect((await web.login(user.email, user.password)).status).toBe(302);
    return web;
  };

  const changePassword = async (web: WebClient, current: string, next: string, again = next) => {
    await web.get('/settings/account');
    return web.submit('/settings/account/password', { _csrf: web.csrf, current_password: current, new_password: next, new_password_again: again });
  };

  it('changes the password with the current one: other sessions end, this one stays; the old password stops working', async () => {
    const user = await addUser(d);
    const ip = `10.0.0.${++address}`;
    const here = await signedIn(user, ip);
    const elsewhere = await signedIn(user, ip);
    const page = await here.get('/settings/keys');
    expect(page.text).toContain('href="/settings/account"');
    expect((await here.get('/settings/account')).text).toContain('<h1>Account</h1>');

    const wrong = await changePassword(here, 'not my password', 'a brand new passphrase');
    // Refused after a 303 to the page (Post/Redirect/Get), its status kept; the reload is the page afresh.
    expect(wrong.redirectedFrom).toMatchObject({ status: 303, location: '/settings/account' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('The current password is not right.');
    const reloaded = await here.get('/settings/account');
    expect(reloaded.status).toBe(200);
    expect(reloaded.text).not.toContain('The current password is not right.');
    const mismatch = await changePassword(here, user.password, 'a brand new passphrase', 'a brand new passphrasE');
    expect(mismatch.status).toBe(400);
    expect(mismatch.text).toContain('The new passwords do not match.');
    const short = await changePassword(here, user.password, 'short');
    expect(short.status).toBe(400);
    expect(short.text).toContain('The new password must be at least 8 characters.');
    const forged = await here.post('/settings/account/password', { current_password: user.password, new_password: 'forged passphrase', new_password_again: 'forged passphrase' });
    expect(forged.status).toBe(403);
    // None of those changed anything, nor signed the other session out.
    expect((await elsewhere.get('/settings/account')).status).toBe(200);

    await here.get('/settings/account');
    const done = await here.submit('/settings/account/password', { _csrf: here.csrf, current_password: user.password, new_password: 'a brand new passphrase', new_password_again: 'a brand new passphrase' });
    expect(done.redirectedFrom).toMatchObject({ status: 303, location: '/settings/account' });
    expect(done.status).toBe(200);
    expect(done.text).toContain('Password changed. Signed out 1 other session.');
    expect((await here.get('/settings/account')).status).toBe(200);
    const gone = await elsewhere.get('/settings/account');
    expect(gone.status).toBe(302);
    expect(gone.location).toBe('/login?return_to=%2Fsettings%2Faccount');

    expect((await from(ip).login(user.email, user.password)).status).toBe(401);
    expect((await from(ip).login(user.email, 'a brand new passphrase')).status).toBe(302);
  });

  it('changes the email with the password: unique, valid; the new one logs in, the old one does not', async () => {
    const user = await addUser(d);
    const other = await addUser(d);
    const ip = `10.0.0.${++address}`;
    const web = await signedIn(user, ip);
    const change = async (email: string, password = user.password) => {
      await web.get('/settings/account');
      return web.submit('/settings/account/email', { _csrf: web.csrf, email, password });
    };
    const wrong = await change('new-address@example.com', 'not my password');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('The current password is not right.');
    expect(wrong.redirectedFrom).toMatchObject({ status: 303, location: '/settings/account' });
    const invalid = await change('not an email');
    expect(invalid.status).toBe(400);
    expect(invalid.text).toContain('&quot;not an email&quot; is not an e-mail address.');
    const taken = await change(other.email.toUpperCase());
    expect(taken.status).toBe(400);
    expect(taken.text).toContain(`Another account already uses ${other.email.toUpperCase()}.`);

    const fresh = `renamed-${process.pid}@example.com`;
    const done = await change(fresh);
    expect(done.redirectedFrom).toMatchObject({ status: 303, location: '/settings/account' });
    expect(done.text).toContain(`E-mail changed to ${fresh}. Sign in with it from now on.`);
    expect(done.text).toContain(`<strong id="account-email">${fresh}</strong>`);
    expect((await from(ip).login(user.email, user.password)).status).toBe(401);
    expect((await from(ip).login(fresh, user.password)).status).toBe(302);
  });

  it('docsearch users set-password sets the password beside the running daemon and signs the user out everywhere', async () => {
    const user = await addUser(d);
    const ip = `10.0.0.${++address}`;
    const web = await signedIn(user, ip);
    const target = d.databaseUrl ? ['--database', d.databaseUrl] : ['--data-dir', d.dataDir];
    const weak = await runCli(['users', 'set-password', user.email, ...target], { input: 'short\n' });
    expect(weak.code).toBe(1);
    expect(weak.stderr).toContain('password must be at least 8 characters');
    // Nothing on stdin (an unset variable piped in) is a usage error that says so, not a short password.
    for (const input of ['', '\n']) {
      const none = await runCli(['users', 'set-password', user.email, ...target], { input });
      expect(none.code, none.stderr).toBe(2);
      expect(none.stderr).toContain('no password on stdin');
    }
    const unknown = await runCli(['users', 'set-password', 'nobody@example.com', ...target], { input: 'operator chose this\n' });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no account has the e-mail nobody@example.com');
    expect((await web.get('/settings/account')).status).toBe(200);

    const res = await runCli(['users', 'set-password', user.email.toUpperCase(), ...target], { input: 'operator chose this\n' });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`set the password of ${user.email}`);
    expect(res.stderr).toContain('signed out 1 web session');
    expect(res.stdout).toBe('');
    expect((await web.get('/settings/account')).status).toBe(302);
    expect((await from(ip).login(user.email, user.password)).status).toBe(401);
    expect((await from(ip).login(user.email, 'operator chose this')).status).toBe(302);
  });

  it('throttles wrong current passwords as the login form does: 429 with Retry-After, then even the right one waits', async () => {
    const user = await addUser(d);
    const ip = `10.0.0.${++address}`;
    const web = await signedIn(user, ip);
    const statuses: number[] = [];
    for (let i = 0; i < 6 && statuses.at(-1) !== 429; i++) statuses.push((await changePassword(web, `wrong-${i}`, 'a brand new passphrase')).status);
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((s) => s === 401)).toBe(true);
    const locked = await changePassword(web, user.password, 'a brand new passphrase');
    expect(locked.status).toBe(429);
    expect(locked.text).toContain('Too many failed attempts. Try again in 15 minutes.');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
    // Said on the page the 303 leads to: on a redirect it would ask the browser to wait before following it.
    expect(locked.redirectedFrom?.headers.get('retry-after')).toBeNull();
    await web.get('/settings/account');
    const email = await web.submit('/settings/account/email', { _csrf: web.csrf, email: 'elsewhere@example.com', password: user.password });
    expect(email.status).toBe(429);
    // The same budget as the login form's.
    expect((await from(ip).login(user.email, user.password)).status).toBe(429);
  });
});
