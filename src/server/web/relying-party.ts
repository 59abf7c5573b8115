import type { RelyingParty } from '../../auth/passkeys.js';
import type { Services } from '../services.js';

/** The server's passkey relying party, or null when it cannot offer passkeys (see relyingPartyOf). */
export function relyingParty(s: Services): RelyingParty | null {
  const rp = s.relyingParty();
  return 'unavailable' in rp ? null : rp;
}
