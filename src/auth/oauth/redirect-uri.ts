/**
 * Redirect URI rules (RFC 6749 §3.1.2, RFC 9700 §4.1.3, RFC 8252 §7.3 / §8.3):
 * - registered URIs are absolute, carry no fragment, and use https — or http only on a loopback
 *   host — or a private-use scheme with a dot (native apps, `com.example.app:/cb`);
 * - a presented URI matches a registered one by exact string comparison;
 * - clients flagged for loopback (native apps: the CLI, self-registered clients whose URIs are all loopback) may
 *   present one of their registered http://127.0.0.1/… or http://[::1]/… URIs on any port: only the port
 *   varies (RFC 8252 §7.3), never the host or the path; `localhost` is matched exactly (RFC 8252 §8.3).
 */
const LOOPBACK_LITERALS = new Set(['127.0.0.1', '[::1]']);
const LOOPBACK_HOSTS = new Set([...LOOPBACK_LITERALS, 'localhost']);

function parse(uri: string): URL | null {
  try {
    return new URL(uri);
  } catch {
    return null;
  }
}

/** Why a URI cannot be registered, or null when it can. */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > 2000) return 'is longer than 2000 characters';
  const url = parse(uri);
  if (!url) return 'is not an absolute URL';
  if (uri.includes('#')) return 'must not contain a fragment (#)';
  if (url.username || url.password) return 'must not contain user information';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') return LOOPBACK_HOSTS.has(url.hostname) ? null : 'must use https (http is allowed only for 127.0.0.1, [::1] and localhost)';
  if (/^[a-z][a-z0-9+\-]*\.[a-z0-9+.\-]+:$/i.test(url.protocol)) return null;
  return 'must use https, loopback http, or a private-use scheme such as com.example.app:';
}

/** http on a loopback host, `localhost` included: a client whose redirect URIs are all such is a native app (RFC 8252 §7.3). */
export function isLoopbackHttp(uri: string): boolean {
  const url = parse(uri);
  return !!url && url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

export function isLoopbackRedirect(uri: string): boolean {
  const url = parse(uri);
  return !!url && url.protocol === 'http:' && LOOPBACK_LITERALS.has(url.hostname) && !url.username && !url.password && !uri.includes('#');
}

/** `presented` is `registered` on another port: both loopback literals, and equal once the port is made the same. */
function samePortAside(registered: string, presented: string): boolean {
  const url = parse(registered);
  const at = parse(presented);
  if (!url || !at || !isLoopbackRedirect(registered)) return false;
  url.port = at.port;
  return url.href === presented;
}

export function redirectUriAllowed(client: { redirectUris: string[]; loopbackAnyPort: boolean }, uri: string): boolean {
  if (client.redirectUris.includes(uri)) return true;
  return client.loopbackAnyPort && isLoopbackRedirect(uri) && client.redirectUris.some((registered) => samePortAside(registered, uri));
}

/** Appends query parameters to a redirect URI, keeping its own query as it is (RFC 6749 §3.1.2). */
export function withQuery(uri: string, params: Record<string, string | undefined>): string {
  const query = Object.entries(params)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
  const sep = !uri.includes('?') ? '?' : uri.endsWith('?') || uri.endsWith('&') ? '' : '&';
  return uri + sep + query;
}
