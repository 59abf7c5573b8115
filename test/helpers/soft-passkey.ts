/**
 * A software authenticator for tests without a browser: it answers `navigator.credentials.create` options the way a
 * platform authenticator with "none" attestation does (WebAuthn Level 3 §6.5 authenticator data, §8.7 "none"), with
 * a P-256 key of its own. The browser tests use Chromium's virtual authenticator instead; this is for the HTTP-level
 * suites (the permission matrix) that must register a real passkey to act on it.
 */
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
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

const sha256 = (b: string | Uint8Array) => createHash('sha256').update(b).digest();

/**
 * A software passkey that registers and signs in (`registrationResponse` registers only, its key thrown away): a P-256
 * key kept here, "none" attestation, assertions signed as WebAuthn §6.3.3 says (authenticator data, then the hash of
 * the client data; DER signature). Each assertion carries the next signature counter, or the one a test asks for (as
 * a cloned authenticator's would).
 */
export class SigningPasskey {
  private readonly key = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  private readonly id = randomBytes(16);
  private count = 0;

  constructor(private readonly origin: string) {}

  private rpIdHash(rpId: string | undefined): Buffer {
    return sha256(rpId ?? new URL(this.origin).hostname);
  }

  register(options: { challenge: string; rp: { id?: string } }): Record<string, unknown> {
    const jwk = this.key.publicKey.export({ format: 'jwk' });
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    // Flags: user present, user verified, attested credential data; the counter starts at 0.
    const authData = Buffer.concat([this.rpIdHash(options.rp.id), Buffer.from([0x45]), Buffer.alloc(4), Buffer.alloc(16), Buffer.from([0, this.id.length]), this.id, Buffer.from(cose)]);
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', new Uint8Array(authData)]]) as never);
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin: this.origin, crossOrigin: false }));
    return {
      id: b64url(this.id),
      rawId: b64url(this.id),
      type: 'public-key',
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /**
   * An assertion for `options` with the next counter, or with `count`; its user verified (PIN or biometric), or, with
   * `userVerified` false, only present (a security key touched without its PIN).
   */
  assert(options: { challenge: string; rpId?: string }, count = this.count + 1, userVerified = true): Record<string, unknown> {
    this.count = count;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(count);
    const authenticatorData = Buffer.concat([this.rpIdHash(options.rpId), Buffer.from([userVerified ? 0x05 : 0x01]), counter]);
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: this.origin, crossOrigin: false }));
    const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), this.key.privateKey);
    return {
      id: b64url(this.id),
      rawId: b64url(this.id),
      type: 'public-key',
      response: { clientDataJSON: b64url(clientDataJSON), authenticatorData: b64url(authenticatorData), signature: b64url(signature) },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
