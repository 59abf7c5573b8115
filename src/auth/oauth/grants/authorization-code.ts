import { newId } from '../../../core/ids.js';
import { sha256Hex } from '../../../core/secrets.js';
import { InvalidGrant, InvalidRedirectUri, InvalidRequest, InvalidTarget } from '../errors.js';
import { isPkceValue, verifyS256 } from '../pkce.js';
import { redirectUriAllowed } from '../redirect-uri.js';
import { issueTokenPair } from '../tokens.js';
import type { Grant } from './grant.js';

/**
 * authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.6). Rules, in order:
 * - code is present (invalid_request) and known (invalid_grant);
 * - a code already exchanged fails invalid_grant and revokes the grant it produced, i.e. every
 *   token issued from it (RFC 6749 §4.1.2, RFC 9700 §4.5);
 * - the code is younger than 10 minutes, was issued to this client and for this redirect_uri: a redirect_uri the
 *   client never registered is invalid_redirect_uri (the spec's code), a registered other one invalid_grant;
 * - when the authorize request carried a code_challenge, code_verifier is required and must hash
 *   (S256) to it; a verifier without a challenge is refused (RFC 9700 §4.8.2, PKCE downgrade);
 * - a `resource`, when sent, equals the one the authorization request named (RFC 8707; invalid_target); the
 *   grant and its tokens are bound to the authorization request's resource;
 * - binding failures leave the code unused; only a successful exchange consumes it, atomically
 *   with issuing the tokens (one transaction that holds the code's row: an exchange of the same code on
 *   another replica waits for it, then counts as reuse).
 */
export const authorizationCodeGrant: Grant = {
  grantType: 'authorization_code',
  parameters: new Set(['code', 'redirect_uri', 'code_verifier']),
  async handler({ params, client, stores, now, resource, describeResource }) {
    const code = params.code;
    if (code === undefined) return new InvalidRequest('missing required parameter: code');
    const redirectUri = params.redirect_uri;
    const verifier = params.code_verifier;
    if (verifier !== undefined && !isPkceValue(verifier)) return new InvalidRequest('code_verifier must be 43 to 128 characters of [A-Za-z0-9-._~]');
    const codeHash = sha256Hex(code);

    return stores.transaction(async (tx) => {
      const record = await tx.codes.find(codeHash, { forUpdate: true });
      if (!record) return new InvalidGrant('authorization code is invalid');
      const at = now();
      if (record.usedAt !== null) {
        if (record.grantId) await tx.tokens.revokeGrant(record.grantId, at);
        return new InvalidGrant('authorization code has already been used; the tokens issued from it are revoked');
      }
      if (record.expiresAt <= at) return new InvalidGrant('authorization code has expired');
      if (record.clientId !== client.id) return new InvalidGrant('authorization code was issued to another client');
      if (redirectUri === undefined) return new InvalidRequest('missing required parameter: redirect_uri');
      // The spec's error table: a URI the client never registered is invalid_redirect_uri; a registered one other
      // than the authorization request's is invalid_grant (RFC 6749 §5.2).
      if (!redirectUriAllowed(client, redirectUri)) return new InvalidRedirectUri('redirect_uri is not registered for this client');
      if (redirectUri !== record.redirectUri) return new InvalidGrant('redirect_uri does not match the one in the authorization request');
      if (record.codeChallenge !== null) {
        if (verifier === undefined) return new InvalidGrant('code_verifier is required: the authorization request used PKCE');
        if (!verifyS256(verifier, record.codeChallenge)) return new InvalidGrant('PKCE verification failed: code_verifier does not match code_challenge');
      } else if (verifier !== undefined) {
        return new InvalidGrant('code_verifier was sent but the authorization request had no code_challenge');
      }
      if (resource !== undefined && resource !== record.resource) {
        return new InvalidTarget(`resource ${describeResource(resource)} differs from the authorization request's (${describeResource(record.resource)})`);
      }

      const grantId = newId('grt', at);
      await tx.tokens.createGrant({ id: grantId, userId: record.userId, clientId: client.id, scopes: record.scopes, createdAt: at, resource: record.resource });
      if (!(await tx.codes.markUsed(codeHash, grantId, at))) return new InvalidGrant('authorization code has already been used');
      return issueTokenPair(tx.tokens, at, { grantId, clientId: client.id, userId: record.userId, scopes: record.scopes, resource: record.resource });
    });
  },
};
