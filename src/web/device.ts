import Bowser from 'bowser';
import { cutUnits } from '../core/code-points.js';

/** "Chrome 131 on Linux", from a session's user agent (Bowser: a maintained parser of those strings). */
export function deviceOf(userAgent: string | null): string {
  if (!userAgent) return 'Unknown device';
  const { browser, os } = Bowser.parse(userAgent);
  const name = browser.name ? `${browser.name}${browser.version ? ` ${browser.version.split('.')[0]}` : ''}` : cutUnits(userAgent, 60);
  // Windows and macOS have release names (10, Sonoma); iOS and Android a number, of which two parts say enough.
  const release = os.versionName ?? os.version?.split('.').slice(0, 2).join('.');
  return os.name ? `${name} on ${os.name}${release ? ` ${release}` : ''}` : name;
}
