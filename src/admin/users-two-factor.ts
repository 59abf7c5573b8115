import { resetSecondFactors } from '../auth/two-factor.js';
import { systemClock } from '../core/clock.js';
import { isAppError } from '../core/errors.js';
import { confirmDestructive } from '../terminal/confirm.js';
import { CliError } from '../terminal/errors.js';
import type { IO } from '../terminal/io.js';
import { PasskeyStore } from '../store/sql/passkeys.js';
import { SessionStore } from '../store/sql/sessions.js';
import { SettingsStore } from '../store/sql/settings.js';
import { TwoFactorStore } from '../store/sql/two-factor.js';
import { UserStore } from '../store/sql/users.js';
import { KEY_ID_SETTING } from '../server/secrets-key.js';
import { operatorAudit } from './operator-audit.js';
import type { LibraryFlags } from './library-options.js';
import { openOperatorDatabase, operatorConfig } from './operator-database.js';

/** Said before a reset: what cannot be brought back. */
const RESET_CONSEQUENCE = 'Authenticator apps, recovery codes and passkeys are deleted for good and web sessions end; the password alone signs in until a new one is set up.';

/**
 * What `docsearch users reset-2fa` does once its arguments hold: removes every second factor of the account (or, with
 * `all`, of every account, and the record of the secrets key they were sealed with) and ends its web sessions.
 * Loaded only when it runs.
 */
export async function resetTwoFactor(io: IO, email: string | undefined, flags: LibraryFlags & { all?: boolean; yes?: boolean }): Promise<void> {
  const config = operatorConfig(io, 'users reset-2fa', { 'data-dir': flags.dataDir, database: flags.database });
  const database = await openOperatorDatabase(config, { init: flags.init });
  try {
    const { db } = database;
    const now = systemClock;
    const users = new UserStore(db, now);
    const sessions = new SessionStore(db, now);
    const audit = operatorAudit(db, 'users reset-2fa');
    const stores = { store: new TwoFactorStore(db, now), passkeys: new PasskeyStore(db, now), users };
    let targets;
    if (email) {
      const user = await users.findByEmail(email.trim());
      if (!user) throw new CliError(`no account has the email ${email.trim()}`);
      // Nothing to lose, nothing to ask: the loop below says there was nothing to reset.
      if (await stores.store.hasSecondFactor(user.id)) await confirmDestructive(io, { action: `remove the second factors of ${user.email}`, consequence: RESET_CONSEQUENCE }, flags.yes);
      targets = [user];
    } else {
      await confirmDestructive(io, { action: "remove every account's second factors", consequence: RESET_CONSEQUENCE }, flags.yes);
      targets = await users.list();
    }
    for (const user of targets) {
      const removed = await resetSecondFactors(stores, user.id);
      if (!removed.totp && removed.recoveryCodes === 0 && removed.passkeys === 0) {
        if (email) io.stderr.write(`${user.email} has no second factor: nothing to reset\n`);
        continue;
      }
      const ended = await sessions.deleteForUser(user.id);
      await audit.record({ type: 'two_factor.reset', target: { type: 'account', id: user.id, label: user.email }, details: { ...removed, sessions_ended: ended } });
      const what = [removed.totp ? 'authenticator app' : null, removed.recoveryCodes ? `${removed.recoveryCodes} recovery code${removed.recoveryCodes === 1 ? '' : 's'}` : null, removed.passkeys ? `${removed.passkeys} passkey${removed.passkeys === 1 ? '' : 's'}` : null].filter(Boolean);
      io.stderr.write(`reset ${user.email}: removed ${what.join(', ')}; signed out ${ended} web session${ended === 1 ? '' : 's'}\n`);
    }
    if (flags.all) await new SettingsStore(db).delete(KEY_ID_SETTING);
  } catch (err) {
    if (isAppError(err) && err.status < 500) throw new CliError(err.message);
    throw err;
  } finally {
    await database.close();
  }
}
