import { spawn } from 'node:child_process';
import { BIN, type Daemon, type TestUser } from '../helpers/daemon.js';
import { hiddenFields, loggedIn, type WebClient } from '../server/web-client.js';

export interface BrowserLogin {
  /** The authorize URL the CLI printed. */
  authorizeUrl: string;
  /** The consent page the user saw (empty when the server skipped it). */
  consent: string;
  /** What the loopback listener answered the browser. */
  landing: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A `docsearch login --no-browser` under way: the authorize URL it printed, and its exit. */
export interface CliLogin {
  authorizeUrl: string;
  exited: Promise<number | null>;
  stdout: () => string;
  stderr: () => string;
  kill: () => void;
}

/** Starts `docsearch login --no-browser` and waits for the authorize URL it prints for the browser. */
export async function startCliLogin(d: Daemon, env: Record<string, string>, extra: string[] = []): Promise<CliLogin> {
  const proc = spawn(process.execPath, [BIN, 'login', '--server', d.url, '--no-browser', ...extra], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  proc.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  const exited = new Promise<number | null>((res) => proc.once('close', (c) => res(c)));
  const authorizeUrl = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no URL printed:\n${stderr}`)), 20_000);
    proc.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      const m = /^ {2}(http:\/\/\S+\/api\/oauth\/authorize\?\S+)$/m.exec(stderr);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    });
  });
  return { authorizeUrl, exited, stdout: () => stdout, stderr: () => stderr, kill: () => proc.kill() };
}

/**
 * `docsearch login --no-browser` driven to its end: the printed authorize URL is opened by a logged-in web client
 * standing in for the browser, consent approved, and the redirect delivered to the CLI's loopback listener.
 * `signIn` replaces the password sign-in: it gets the authorize URL and returns a client signed in however the
 * account signs in (its second factor too).
 */
export async function browserLogin(
  d: Daemon,
  user: TestUser,
  env: Record<string, string>,
  extra: string[] = [],
  signIn: (authorizeUrl: string) => Promise<WebClient> = () => loggedIn(d, user),
): Promise<BrowserLogin> {
  const login = await startCliLogin(d, env, extra);
  const { authorizeUrl } = login;
  const web = await signIn(authorizeUrl);
  let res = await web.get(authorizeUrl);
  let consent = '';
  if (res.status === 200) {
    consent = res.text;
    res = await web.post('/oauth/consent', { ...hiddenFields(consent, '/oauth/consent'), decision: 'approve' });
  }
  const callback = res.location;
  if (!callback) throw new Error(`no redirect after consent: ${res.status}`);
  // The "browser" lands on the CLI's loopback listener.
  const landing = await (await fetch(callback)).text();
  return { authorizeUrl, consent, landing, code: await login.exited, stdout: login.stdout(), stderr: login.stderr() };
}
