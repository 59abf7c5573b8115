import { SELF_REGISTERED } from '../../../store/sql/oauth-clients.js';
import { InvalidRequest } from '../errors.js';
import { isPkceValue } from '../pkce.js';
import type { AuthorizeCheck } from './request.js';

/**
 * Rules (RFC 7636, RFC 9700 §2.1.1):
 * - code_challenge_method, when sent, is S256 — `plain` is refused;
 * - a code_challenge needs code_challenge_method=S256 (the RFC default would be plain);
 * - the challenge is 43–128 unreserved characters;
 * - public clients must send a challenge, and so must clients that registered themselves (RFC 7591, metadata
 *   documents), confidential or not: nobody vouches for how they keep their secret (docs/mcp.md);
 * - a confidential client the operator or a user registered may omit it; when sent it is enforced.
 */
export const checkPkce: AuthorizeCheck = (ctx) => {
  const challenge = ctx.params.code_challenge;
  const method = ctx.params.code_challenge_method;
  if (method !== undefined && method !== 'S256') throw new InvalidRequest('code_challenge_method must be S256 (plain is not supported)');
  if (challenge === undefined) {
    if (method !== undefined) throw new InvalidRequest('code_challenge_method was sent without code_challenge');
    if (ctx.client!.isPublic) throw new InvalidRequest('PKCE is required for public clients: send code_challenge and code_challenge_method=S256');
    if (SELF_REGISTERED.includes(ctx.client!.registration)) {
      throw new InvalidRequest('PKCE is required for clients that registered themselves: send code_challenge and code_challenge_method=S256');
    }
    ctx.codeChallenge = null;
    return;
  }
  if (method === undefined) throw new InvalidRequest('code_challenge_method=S256 is required with code_challenge');
  if (!isPkceValue(challenge)) throw new InvalidRequest('code_challenge must be 43 to 128 characters of [A-Za-z0-9-._~]');
  ctx.codeChallenge = challenge;
};
