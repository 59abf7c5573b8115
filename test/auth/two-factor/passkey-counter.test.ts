/**
 * A passkey whose signature counter goes backwards is refused (docs/security.md, Passkeys: "counters that go
 * backwards (a cloned authenticator) are refused"), over HTTP against the built daemon: a software authenticator
 * registers through Settings → Security, then signs in with counters chosen here. An assertion with a counter lower
 * than, or equal to, the one stored from the last sign-in is refused — as the whole sign-in and as the second step
 * after a password — signs nobody in and leaves the stored counter as it was; the next higher counter from the same
 * key is taken, so the refusals were for the counter alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows, type StateReader, stateReader } from '../../access/matrix-state.js';
import { addUser, type Daemon, removeDir, startDaemon, type TestUser } from '../../helpers/daemon.js';
import { freePort } from '../../helpers/ports.js';
import { SigningPasskey } from '../../helpers/soft-passkey.js';
import { loggedIn, WebClient } from '../../server/web-client.js';



interface Answer {
  status: number;
  body: any;
  text: string;
}

/** A JSON POST from the browser `web` (its cookies sent and kept), as the pages' script sends one. */
async function postJson(d: Daemon, web: WebClient, path: string, body: unknown, csrf: string): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': csrf };
  if (web.cookies.size > 0) headers.cookie = [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await fetch(d.url + path, { method: 'POST', headers, body: JSON.stringify(body), redirect: 'manual' });
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair!.indexOf('=');
    const [name, value] = [pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim()];
    if (value === '' || /max-age=0/i.test(line)) web.cookies.delete(name);
    else web.cookies.set(name, value);
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* a page */
  }
  return { status: res.status, body: parsed, text };
}

/** Whether the browser is signed in: a signed-in page answers, else it is sent to the login page. */
const signedIn = async (web: WebClient) => (await web.get('/settings/keys')).status === 200;

describe('passkey signature counters', () => {
  let d: Daemon;
  let state: StateReader;
  let publicUrl: string;
  let alice: TestUser;
  let key: SigningPasskey;

  beforeAll(async () => {
    const port = await freePort();
    publicUrl = `http://localhost:${port}`;
    d = await startDaemon({ args: ['--port', String(port), '--public-url', publicUrl] });
    state = await stateReader(d);
    alice = await addUser(d);
    // Alice registers the passkey from Settings → Security (it signs in alone, the default).
    key = new SigningPasskey(publicUrl);
    const web = await loggedIn(d, alice);
    await web.get('/settings/security');
    const options = await postJson(d, web, '/settings/security/passkeys/options', {}, web.csrf);
    expect(options.status, options.text).toBe(200);
    const made = await postJson(d, web, '/settings/security/passkeys', { response: key.register(options.body), name: 'Cloned key' }, web.csrf);
    expect(made.status, made.text).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await state?.close();
    if (!d) return;
    expect(await d.stop()).toBe(0);
    removeDir(d.dataDir);
  });

  /** The counter stored for Alice's one passkey, read from the daemon's database. */
  const storedCounter = async () => {
    const passkeys = rows(await state.snapshot(), 'passkeys');
    expect(passkeys).toHaveLength(1);
    return Number(passkeys[0]!.counter);
  };

  /** A passkey sign-in from `web` (its next step: the whole sign-in, or the second one), the assertion at `count`. */
  async function withPasskey(web: WebClient, csrf: string, count: number): Promise<Answer> {
    const options = await postJson(d, web, '/login/passkey/options', {}, csrf);
    expect(options.status, options.text).toBe(200);
    return postJson(d, web, '/login/passkey', { response: key.assert(options.body, count), return_to: '' }, csrf);
  }

  /** The passkey alone, from a new browser: the answer, and whether that browser is signed in afterwards. */
  async function alone(count: number): Promise<{ answer: Answer; signedIn: boolean }> {
    const web = new WebClient(d);
    await web.get('/login');
    const answer = await withPasskey(web, web.csrf, count);
    return { answer, signedIn: await signedIn(web) };
  }

  it('refuses a passkey alone whose counter is lower than, or equal to, the last one, keeping the stored counter', async () => {
    expect(await storedCounter()).toBe(0);
    const first = await alone(5);
    expect(first.answer.status, first.answer.text).toBe(200);
    expect(first.signedIn).toBe(true);
    expect(await storedCounter()).toBe(5);

    for (const count of [4, 1, 5]) {
      const cloned = await alone(count);
      expect(cloned.answer.status, `counter ${count}: ${cloned.answer.text}`).toBe(401);
      expect(cloned.answer.text).toMatch(new RegExp(`The passkey was not accepted: .*counter value ${count} was lower than expected 5`));
      expect(cloned.signedIn).toBe(false);
      expect(await storedCounter()).toBe(5);
    }

    // The same key, counting on: taken, so the refusals were for the counter alone.
    const next = await alone(6);
    expect(next.answer.status, next.answer.text).toBe(200);
    expect(next.signedIn).toBe(true);
    expect(await storedCounter()).toBe(6);
  });

  it('refuses it as the second step after the password too: the browser stays waiting, the counter as it was', async () => {
    const stored = await storedCounter();
    const web = new WebClient(d);
    const password = await web.login(alice.email, alice.password);
    expect(password.location).toMatch(/^\/login\/verify/);
    await web.get('/login/verify');
    const csrf = web.csrf;

    const cloned = await withPasskey(web, csrf, stored - 1);
    expect(cloned.status, cloned.text).toBe(401);
    expect(cloned.text).toMatch(/counter value/);
    expect(await signedIn(web)).toBe(false);
    expect(await storedCounter()).toBe(stored);

    // Still waiting for its second step: the passkey counting on finishes it.
    const next = await withPasskey(web, csrf, stored + 1);
    expect(next.status, next.text).toBe(200);
    expect(await signedIn(web)).toBe(true);
    expect(await storedCounter()).toBe(stored + 1);
  });
});
