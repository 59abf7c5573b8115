/**
 * `--smtp-url` as the configuration reads it: checked and masked without loading the mail library (the option table
 * is read by every command's help).
 */

/** What is wrong with an SMTP URL, or null: smtp:// (STARTTLS when the server offers it) or smtps:// (TLS from the start). */
export function smtpUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be a URL such as smtp://user:password@mail.example.com:587 or smtps://mail.example.com';
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') return `must start with smtp:// or smtps://, not ${url.protocol}//`;
  if (!url.hostname) return 'must name the mail server';
  return null;
}

/** The URL with its password masked, for logs and --print-config. */
export function redactSmtpUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '[redacted]';
  }
}

/** The relay as Admin → Mail names it: scheme, host and port; never its user or password. */
export function relayShown(value: string): string {
  try {
    const url = new URL(value);
    return `${url.protocol}//${url.host}`;
  } catch {
    return '[unreadable]';
  }
}
