import { CliError } from '../terminal/errors.js';

export interface Browser {
  /** Opens an http(s) URL in the user's browser; false when it could not. */
  open(url: string): Promise<boolean>;
}

/**
 * Only http(s) URLs reach the OS opener: a server-supplied `file:` or custom-scheme URL must
 * never launch a local program (gh's authflow, npm's open-url).
 */
export function assertHttpUrl(url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CliError(`refusing to open "${url}": not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new CliError(`refusing to open ${u.protocol} URL: only http(s) URLs are opened`);
  return u;
}

export const systemBrowser: Browser = {
  async open(url) {
    assertHttpUrl(url);
    try {
      const { default: open } = await import('open');
      const child = await open(url, { wait: false });
      // `open` resolves once the opener is spawned; a missing opener shows up as an error event. An opener that finds
      // no browser (xdg-open without a desktop, over SSH) exits non-zero at once; one still running after a moment
      // has started a browser, which may keep it running.
      return await new Promise<boolean>((res) => {
        const timer = setTimeout(() => res(child.pid !== undefined), 1500);
        const settle = (opened: boolean) => {
          clearTimeout(timer);
          res(opened);
        };
        child.once('error', () => settle(false));
        child.once('exit', (code) => settle(code === 0));
      });
    } catch {
      return false;
    }
  },
};
