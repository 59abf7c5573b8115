import type { IncomingHttpHeaders } from 'node:http';
import { codePointCount, cutChars } from '../core/code-points.js';
import { withoutIssuedCredentials } from '../core/logger.js';

/** Enough for any message the server writes; a message quoting a long value is cut (it was answered whole). */
const MAX_LOGGED = 300;
/** Shorter values are not looked for: removing a common short word would garble the message, not hide a secret. */
const MIN_SECRET = 6;
const CREDENTIAL_WORDS = new Set(['auth', 'authorization', 'code', 'cookie', 'credential', 'credentials', 'key', 'apikey', 'pass', 'passwd', 'password', 'pw', 'secret', 'session', 'token', 'verifier']);
const MAX_DEPTH = 4;
/**
 * A run shaped like the tokens docsearch issues (64 hex digits: OAuth tokens; base62 and base64url: codes, session
 * ids, invitation, setup and reset tokens): a client that pastes one in the wrong field (a project id, a grant type)
 * is quoted back with it. A long run mixing digits with both cases, or of hex digits, is taken for one.
 */
const TOKEN_RUN = /[A-Za-z0-9_-]{32,}/g;
const tokenShaped = (run: string) => /[0-9]/.test(run) && (/^[0-9a-f]+$/i.test(run) || (/[a-z]/.test(run) && /[A-Z]/.test(run)));

/** `x-api-key`, `access_token`, `newPassword2`, `client_secret`: a name any of whose words names a credential. */
function namesCredential(name: string): boolean {
  const words = name.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase().split(/[^a-z0-9]+/);
  return words.some((w) => CREDENTIAL_WORDS.has(w.replace(/\d+$/, '')));
}

/** The values a request sent as credentials, or under a credential's name, wherever it sent them. */
function presentedSecrets(req: RequestParts): string[] {
  const found: string[] = [];
  for (const [name, raw] of Object.entries(req.headers)) {
    if (!namesCredential(name) || raw === undefined) continue;
    for (const value of Array.isArray(raw) ? raw : [raw]) {
      // `<scheme> <credential>` (the scheme itself is no secret), or the value as a whole.
      found.push(value, ...value.split(/\s+/).slice(1));
      if (name === 'cookie') found.push(...value.split(';').map((c) => c.slice(c.indexOf('=') + 1).trim()));
      const basic = /^Basic\s+(\S+)/i.exec(value);
      if (basic) {
        const decoded = Buffer.from(basic[1]!, 'base64').toString();
        found.push(decoded, decoded.slice(decoded.indexOf(':') + 1));
      }
    }
  }
  const walk = (value: unknown, named: boolean, depth: number): void => {
    if (typeof value === 'string') {
      if (named) found.push(value);
    } else if (Array.isArray(value)) {
      if (depth < MAX_DEPTH) for (const v of value) walk(v, named, depth + 1);
    } else if (value !== null && typeof value === 'object' && depth < MAX_DEPTH) {
      for (const [k, v] of Object.entries(value)) walk(v, named || namesCredential(k), depth + 1);
    }
  };
  walk(req.query, false, 0);
  walk((req.request as { body?: unknown }).body, false, 0);
  // A scheme sent alone (`Authorization: Bearer`) is no secret, and the messages name it.
  return found.filter((s) => s.length >= MIN_SECRET && !/^(basic|bearer|digest|token)$/i.test(s));
}

interface RequestParts {
  headers: IncomingHttpHeaders;
  query: unknown;
  /** Koa's request: its `body` when a body parser has read one. */
  request: object;
}

/**
 * Why a request was refused, as its log line says it: the message its client was answered, without what the request
 * sent as a credential (its Authorization header, cookies, a key in a header, a token in the query, a password or key
 * in a body field — a message may quote a value the client put in the wrong field), without any credential docsearch
 * issues or anything shaped like one, and at most 300 characters.
 */
export function rejectionReason(req: RequestParts, message: string): string {
  let out = message;
  for (const secret of presentedSecrets(req).sort((a, b) => b.length - a.length)) {
    for (const form of new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)])) out = out.replaceAll(form, '[redacted]');
  }
  out = withoutIssuedCredentials(out).replace(TOKEN_RUN, (run) => (tokenShaped(run) ? '[redacted]' : run));
  return codePointCount(out) > MAX_LOGGED ? `${cutChars(out, MAX_LOGGED - 1)}…` : out;
}
