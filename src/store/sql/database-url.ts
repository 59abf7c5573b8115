/**
 * The `--database` URL: postgres:// or postgresql://, as libpq and `pg` read it. Its password (in the user
 * part, or a `password` query parameter) is a secret: every message, log line and printed configuration shows
 * the URL through `redactDatabaseUrl`.
 */
const SCHEMES = new Set(['postgres:', 'postgresql:']);
const MASK = '[redacted]';

/** The URL with its password masked; something unparsable is masked whole (it might be all secret). */
export function redactDatabaseUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return MASK;
  }
  const user = u.username ? `${u.username}${u.password ? `:${MASK}` : ''}@` : u.password ? `:${MASK}@` : '';
  const params = [...u.searchParams].map(([k, v]) => `${encodeURIComponent(k)}=${k.toLowerCase() === 'password' ? MASK : encodeURIComponent(v)}`);
  return `${u.protocol}//${user}${u.host}${u.pathname}${params.length > 0 ? `?${params.join('&')}` : ''}`;
}

/** Why the value is not a usable database URL (the message shows it redacted), or null when it is one. */
export function databaseUrlProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `must be a postgres:// or postgresql:// URL, got ${JSON.stringify(redactDatabaseUrl(url))}`;
  }
  if (!SCHEMES.has(u.protocol)) return `must be a postgres:// or postgresql:// URL, got ${JSON.stringify(redactDatabaseUrl(url))}`;
  if (!u.hostname && !u.searchParams.has('host')) return `names no host: ${JSON.stringify(redactDatabaseUrl(url))}`;
  return null;
}
