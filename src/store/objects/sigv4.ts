/**
 * AWS Signature V4 for the index cache's relay (src/store/lancedb/index-cache-relay.ts): a request LanceDB signed
 * with the relay's own key is checked, and what the relay passes on to the store is signed again with the store's
 * credentials. The canonical request and the signature are the AWS SDK's own signer (@smithy/signature-v4); only
 * reading the Authorization header back is done here, since the SDK signs but does not verify.
 */
import { createHash, createHmac, timingSafeEqual, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, HttpRequest, Provider, SourceData } from '@smithy/types';

const bytes = (data: SourceData): Buffer =>
  typeof data === 'string' ? Buffer.from(data) : ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data);

/** SHA-256 and HMAC-SHA-256 from node:crypto, in the shape the SDK's signer takes. */
class NodeSha256 {
  private hash: Hash | Hmac;

  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh();
  }

  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.secret));
  }

  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }

  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }

  reset(): void {
    this.hash = this.fresh();
  }
}

export type Credentials = AwsCredentialIdentity | Provider<AwsCredentialIdentity>;

/** A signer for S3 requests: the path is signed as sent (S3 does not escape it twice). */
export function s3Signer(credentials: Credentials, region: string): SignatureV4 {
  return new SignatureV4({ credentials, region, service: 's3', sha256: NodeSha256, uriEscapePath: false });
}

export interface SignedRequest {
  method: string;
  /** The path as sent, still percent-encoded. */
  path: string;
  /** The query string as sent, without '?'. */
  query: string;
  headers: Record<string, string | string[] | undefined>;
}

const AUTH = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/s3\/aws4_request,\s*SignedHeaders=([a-z0-9;_-]+),\s*Signature=([0-9a-f]{64})$/;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/** How far a request's signing time may be from now (S3's own limit). */
const MAX_SKEW_MS = 15 * 60_000;

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(',') : v);

/** The query as the signer takes it: decoded names and values ('+' is a literal plus, as S3 signs it). */
export function queryObject(query: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const part of query.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1));
    const had = out[name];
    out[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  return out;
}

/** Checks requests signed with one key (the SDK's signer keeps the day's signing key between them). */
export class SignatureVerifier {
  private readonly signer: SignatureV4;

  constructor(
    private readonly key: { accessKeyId: string; secretAccessKey: string },
    private readonly region: string,
  ) {
    this.signer = s3Signer(key, region);
  }

  /**
   * Why `req` does not carry a valid signature by the key (for a 403), or null when it does: the Authorization
   * header names the key's id, and the signature over the headers it lists, computed again here, is the same.
   */
  verify(req: SignedRequest, now = Date.now()): Promise<string | null> {
    return verifySigned(req, this.key, this.region, this.signer, now);
  }
}

async function verifySigned(req: SignedRequest, key: { accessKeyId: string }, region: string, signer: SignatureV4, now: number): Promise<string | null> {
  const auth = AUTH.exec(one(req.headers.authorization) ?? '');
  if (!auth) return 'missing or malformed SigV4 Authorization header';
  const [, keyId, , scopeRegion, signedList, signature] = auth as unknown as [string, string, string, string, string, string];
  const a = Buffer.from(keyId);
  const b = Buffer.from(key.accessKeyId);
  if (a.length !== b.length || !timingSafeEqual(a, b)) return 'unknown access key';
  if (scopeRegion !== region) return 'wrong region in the credential scope';
  const date = AMZ_DATE.exec(one(req.headers['x-amz-date']) ?? '');
  if (!date) return 'missing x-amz-date';
  const [, y, mo, d, h, mi, s] = date.map(Number) as [number, number, number, number, number, number, number];
  const signingDate = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  if (Math.abs(now - signingDate.getTime()) > MAX_SKEW_MS) return 'request time too far from now';

  const signed = signedList.split(';');
  const headers: Record<string, string> = {};
  for (const name of signed) {
    const value = one(req.headers[name]);
    if (value === undefined) return `signed header ${name} is missing`;
    headers[name] = value;
  }
  const host = headers.host ?? '';
  const request: HttpRequest = { method: req.method, protocol: 'http:', hostname: host, path: req.path, query: queryObject(req.query), headers };
  const again = await signer.sign(request, { signingDate, signableHeaders: new Set(signed) });
  const expected = /Signature=([0-9a-f]{64})$/.exec(again.headers.authorization ?? '')?.[1] ?? '';
  const x = Buffer.from(expected);
  const y2 = Buffer.from(signature);
  return x.length === y2.length && timingSafeEqual(x, y2) ? null : 'signature does not match';
}
