/**
 * docs/security.md, Passwords: "Argon2id (19 MiB, 2 passes). 5 wrong attempts in 15 minutes lock that e-mail and that
 * client address". The cost is read from the stored hash (the PHC string names the algorithm, m in KiB, t passes and
 * p lanes), so a cheaper setting cannot slip in unnoticed. The e-mail's own lock is held from many addresses (behind
 * a proxy that forwards each client's), as a guesser spread over a botnet would try one account.
 */
import { describe, expect, it } from 'vitest';
import { addUser, type Daemon, type TestUser } from '../../helpers/daemon.js';
import { withLibraryDb } from '../../helpers/library-db.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';
import { WebClient } from '../../server/web-client.js';

describe('passwords', () => {
  let d: Daemon;
  let alice: TestUser;
  let bob: TestUser;
  daemonForSuite(
    async (started) => {
      d = started;
      alice = await addUser(d);
      bob = await addUser(d);
    },
    { args: ['--trust-proxy'] },
  );

  /** A login attempt from a client address a proxy forwards; its HTTP status. */
  async function loginFrom(address: string, email: string, password: string): Promise<number> {
    const web = new WebClient(d);
    web.headers['x-forwarded-for'] = address;
    await web.get('/login');
    return (await web.post('/login', { _csrf: web.csrf, email, password, return_to: '' })).status;
  }

  it('are stored as Argon2id with 19 MiB and 2 passes, salted per account', () => {
    const hashes = withLibraryDb(d.dataDir, (db) =>
      (db.prepare('select password_hash from users where email in (?, ?)').all(alice.email, bob.email) as { password_hash: string }[]).map((r) => r.password_hash),
    );
    expect(hashes).toHaveLength(2);
    for (const hash of hashes) expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    // addUser gives both the same password: two salts keep equal passwords from showing as equal hashes.
    expect(alice.password).toBe(bob.password);
    expect(hashes[0]).not.toBe(hashes[1]);
  });

  it('lock an e-mail after 5 wrong attempts from as many addresses, whatever its case; other accounts still sign in there', async () => {
    for (let i = 0; i < 5; i++) {
      const email = i % 2 ? alice.email.toUpperCase() : alice.email;
      expect(await loginFrom(`198.51.100.${10 + i}`, email, `wrong guess ${i}`)).toBe(401);
    }
    // A sixth address, the right password: the e-mail is locked.
    expect(await loginFrom('198.51.100.99', alice.email, alice.password)).toBe(429);
    // That address is not: another account signs in from it.
    expect(await loginFrom('198.51.100.99', bob.email, bob.password)).toBe(302);
  });
});
