/**
 * A software authenticator for tests without a browser: it answers `navigator.credentials.create` options the way a
 * platform authenticator with "none" attestation does (WebAuthn Level 3 §6.5 authenticator data, §8.7 "none"), with
 * a P-256 key of its own. The browser tests use Chromium's virtual authenticator instead; this is for the HTTP-level
 * suites (the permission matrix) that must register a real passkey to act on it.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64url = (b: Uint8Array | Buffer) => Buffer.from(b).toString('base64url');

/** The registration response JSON a browser posts for `options` (`PublicKeyCredentialCreationOptionsJSON`) at `origin`. */
export function registrationResponse(options: { challenge: string; rp: { id?: string } }, origin: string): Record<string, unknown> {
  const rpId = options.rp.id ?? new URL(origin).hostname;
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const cose = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]),
  );
  const credentialId = createHash('sha256').update(jwk.x!).digest().subarray(0, 16);
  const authData = Buffer.concat([
    createHash('sha256').update(rpId).digest(),
    Buffer.from([0x45]), // user present, user verified, attested credential data
    Buffer.alloc(4), // sign count
    Buffer.alloc(16), // AAGUID: none
    Buffer.from([0, credentialId.length]),
    credentialId,
    Buffer.from(cose),
  ]);
  const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', new Uint8Array(authData)]]) as never);
  const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin, crossOrigin: false }));
  return {
    id: b64url(credentialId),
    rawId: b64url(credentialId),
    type: 'public-key',
    response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
    clientExtensionResults: {},
    authenticatorAttachment: 'platform',
  };
}
