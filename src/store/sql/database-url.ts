/**
 * The `--database` URL: postgres:// or postgresql://, as libpq and `pg` read it. Its password (in the user
 * part, or a `password` query parameter) is a secret: every message, log line and printed configuration shows
 * the URL through `redactDatabaseUrl`.
 */
const SCHEMES = new Set(['postgres:', 'postgresql:']);
const MASK = '[redacted]';
/** Stands in for the missing host of `postgres://user:pw@/db?host=/run/postgresql`, as `pg` itself parses it. */
const NO_HOST = 'no-host.invalid';

/**
 * The URL parsed, or null. libpq's form for a socket with a user, `user@/db?host=/dir`, has an empty host, which
 * WHATWG URLs refuse after credentials; `pg` reads it (with a placeholder host), so it is read the same way here.
 */
function parse(url: string): { u: URL; host: string } | null {
  try {
    const u = new URL(url);
    return { u, host: u.host };
  } catch {
    if (!url.includes('@/')) return null;
    try {
      return { u: new URL(url.replace('@/', `@${NO_HOST}/`)), host: '' };
    } catch {
      return null;
    }
  }
}

/** The URL with its password masked; something unparsable is masked whole (it might be all secret). */
export function redactDatabaseUrl(url: string): string {
  const parsed = parse(url);
  if (!parsed) return MASK;
  const { u, host } = parsed;
  const user = u.username ? `${u.username}${u.password ? `:${MASK}` : ''}@` : u.password ? `:${MASK}@` : '';
  const params = [...u.searchParams].map(([k, v]) => `${encodeURIComponent(k)}=${k.toLowerCase() === 'password' ? MASK : encodeURIComponent(v)}`);
  return `${u.protocol}//${user}${host}${u.pathname}${params.length > 0 ? `?${params.join('&')}` : ''}`;
}

/** Why the value is not a usable database URL (the message shows it redacted), or null when it is one. */
export function databaseUrlProblem(url: string): string | null {
  const parsed = parse(url);
  if (!parsed || !SCHEMES.has(parsed.u.protocol)) return `must be a postgres:// or postgresql:// URL, got ${JSON.stringify(redactDatabaseUrl(url))}`;
  if (!parsed.host && !parsed.u.searchParams.has('host')) return `names no host: ${JSON.stringify(redactDatabaseUrl(url))}`;
  return null;
}
