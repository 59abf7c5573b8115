import Bowser from 'bowser';

/** "Chrome 131 on Linux", from a session's user agent (Bowser: a maintained parser of those strings). */
export function deviceOf(userAgent: string | null): string {
  if (!userAgent) return 'Unknown device';
  const { browser, os } = Bowser.parse(userAgent);
  const name = browser.name ? `${browser.name}${browser.version ? ` ${browser.version.split('.')[0]}` : ''}` : userAgent.slice(0, 60);
  return os.name ? `${name} on ${os.name}${os.versionName ? ` ${os.versionName}` : ''}` : name;
}
