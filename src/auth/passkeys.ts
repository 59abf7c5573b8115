/**
 * Passkeys (WebAuthn, by `@simplewebauthn/server`): registering one from Settings → Security, and signing in with
 * one, either as the second factor after a password or alone (passwordless, when the account chose it). The
 * challenge of each ceremony is the caller's to keep (in the web session, single use) and hand back.
 *
 * A passkey alone must verify its user (a PIN or biometric: something held and something known or been), since it
 * stands in for both factors; as a second factor, presence is enough. Counters that go backwards (a cloned
 * authenticator) are refused by the verifier.
 */
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';

/** Loaded on first use: the verifier adds ~25 MiB to every daemon, most of whose accounts never register a passkey. */
const webauthn = () => import('@simplewebauthn/server');
import { cutChars } from '../core/code-points.js';
import { MAX_NAME_CHARS } from '../core/name-limits.js';
import type { PasskeyRecord, PasskeyStore } from '../store/sql/passkeys.js';
import type { User, UserStore } from '../store/sql/users.js';

/** Who the passkeys are for: the public URL's host name and origin. */
export interface RelyingParty {
  id: string;
  name: string;
  origin: string;
}

/**
 * The relying party of a public URL, or why there is none: browsers allow passkeys only for a host name (not an IP
 * address), on https or on localhost.
 */
export function relyingPartyOf(publicUrl: string): RelyingParty | { unavailable: string } {
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    return { unavailable: 'the public URL is not set' };
  }
  const host = url.hostname;
  if (/^\d+(\.\d+){3}$/.test(host) || host.startsWith('[')) return { unavailable: `browsers allow passkeys only on a host name, not an IP address (${host}): set --public-url to the name people reach this server at` };
  if (url.protocol !== 'https:' && host !== 'localhost' && !host.endsWith('.localhost')) return { unavailable: 'browsers allow passkeys only over https: set --public-url to this server\'s https address' };
  return { id: host, name: 'docsearch', origin: url.origin };
}

export type PasskeyOutcome<T> = { ok: true; value: T } | { ok: false; message: string };

export class PasskeyService {
  constructor(
    private readonly deps: {
      store: PasskeyStore;
      users: Pick<UserStore, 'findById' | 'passkeySignIn' | 'setPasskeySignIn'>;
    },
  ) {}

  list(userId: string): Promise<PasskeyRecord[]> {
    return this.deps.store.list(userId);
  }

  /** Options for `navigator.credentials.create`: a discoverable credential (so it can sign in alone), none twice. */
  async registrationOptions(rp: RelyingParty, user: Pick<User, 'id' | 'email'>): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const existing = await this.deps.store.list(user.id);
    return (await webauthn()).generateRegistrationOptions({
      rpName: rp.name,
      rpID: rp.id,
      userName: user.email,
      userID: Buffer.from(user.id, 'utf8'),
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
  }

  /** Checks the browser's answer against the challenge it was given and keeps the new passkey. */
  async register(rp: RelyingParty, user: Pick<User, 'id'>, response: RegistrationResponseJSON, expectedChallenge: string, nameInput: string): Promise<PasskeyOutcome<PasskeyRecord>> {
    let verified;
    try {
      verified = await (await webauthn()).verifyRegistrationResponse({ response, expectedChallenge, expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: false });
    } catch (err) {
      return { ok: false, message: `The passkey was not accepted: ${(err as Error).message}` };
    }
    if (!verified.verified) return { ok: false, message: 'The passkey was not accepted.' };
    const { credential, credentialBackedUp } = verified.registrationInfo;
    const name = cutChars(nameInput.trim(), MAX_NAME_CHARS) || 'Passkey';
    const added = await this.deps.store.add({
      userId: user.id,
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: credential.transports ?? [],
      name,
      backedUp: credentialBackedUp,
    });
    return added ? { ok: true, value: added } : { ok: false, message: 'This passkey is registered already.' };
  }

  /**
   * Options for `navigator.credentials.get`: for the second step of a sign-in, the account's own passkeys; for a
   * passkey alone, any discoverable one (the browser offers those it holds for this site), verifying its user.
   */
  async authenticationOptions(rp: RelyingParty, forUserId: string | null): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const allow = forUserId ? (await this.deps.store.list(forUserId)).map((p) => ({ id: p.credentialId, transports: p.transports })) : [];
    return (await webauthn()).generateAuthenticationOptions({ rpID: rp.id, allowCredentials: allow, userVerification: forUserId ? 'preferred' : 'required' });
  }

  /**
   * Checks an assertion. With `forUserId` (the second step) the passkey must be that account's; without, it signs
   * its account in alone, which the account must have chosen, and the authenticator must have verified its user.
   */
  async authenticate(rp: RelyingParty, response: AuthenticationResponseJSON, expectedChallenge: string, forUserId: string | null): Promise<PasskeyOutcome<{ user: User; passkey: PasskeyRecord }>> {
    const passkey = typeof response?.id === 'string' ? await this.deps.store.byCredentialId(response.id) : null;
    if (!passkey || (forUserId !== null && passkey.userId !== forUserId)) return { ok: false, message: 'This passkey is not registered here for this account.' };
    let verified;
    try {
      verified = await (await webauthn()).verifyAuthenticationResponse({
        response,
        expectedChallenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: passkey.counter, transports: passkey.transports },
        requireUserVerification: forUserId === null,
      });
    } catch (err) {
      return { ok: false, message: `The passkey was not accepted: ${(err as Error).message}` };
    }
    if (!verified.verified) return { ok: false, message: 'The passkey was not accepted.' };
    const user = await this.deps.users.findById(passkey.userId);
    if (!user || user.disabledAt !== null) return { ok: false, message: 'This account is disabled. Ask an administrator of this docsearch to enable it.' };
    if (forUserId === null && !(await this.deps.users.passkeySignIn(user.id))) {
      return { ok: false, message: 'This account uses its passkey after the password: sign in with your e-mail and password first.' };
    }
    if (!(await this.deps.store.used(passkey.id, passkey.counter, verified.authenticationInfo.newCounter))) {
      return { ok: false, message: 'The passkey was not accepted: it signed in somewhere else at the same moment. Try again.' };
    }
    return { ok: true, value: { user, passkey } };
  }

  async rename(userId: string, id: string, nameInput: string): Promise<PasskeyRecord | null> {
    const name = cutChars(nameInput.trim(), MAX_NAME_CHARS);
    return name ? this.deps.store.rename(userId, id, name) : null;
  }

  remove(userId: string, id: string): Promise<boolean> {
    return this.deps.store.remove(userId, id);
  }

  /** Whether a passkey alone signs the account in (true), or comes after the password (false). */
  setSignInAlone(userId: string, alone: boolean): Promise<void> {
    return this.deps.users.setPasskeySignIn(userId, alone);
  }
}
