import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, type Daemon, REPO, removeDir, startDaemon } from '../helpers/daemon.js';
import { missingFile } from '../helpers/requirement.js';

/** What the browser tests share: Debian's Chromium, a daemon per suite, axe-core, and where screenshots go. */

const NO_CHROMIUM = missingFile(CHROMIUM, 'install it with `apt-get install -y chromium`');
export const HAVE_CHROMIUM = NO_CHROMIUM === null;
export const ARTIFACTS = join(REPO, 'test-artifacts/web');
const AXE = readFileSync(join(REPO, 'node_modules/axe-core/axe.min.js'), 'utf8');

/** A suite title that says why it is skipped on a machine without Chromium. */
export const browserTitle = (title: string): string => (HAVE_CHROMIUM ? `browser: ${title}` : `browser: ${title} (skipped: ${NO_CHROMIUM})`);

/** A daemon and a Chromium for the enclosing describe block, started before its tests and stopped after. */
export function browserSuite(args: string[] = []): { readonly d: Daemon; readonly browser: Browser } {
  const suite = {} as { d: Daemon; browser: Browser };
  beforeAll(async () => {
    suite.d = await startDaemon({ args });
    suite.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    await suite.browser?.close();
    if (!suite.d) return;
    const code = await suite.d.stop();
    expect(code, `the daemon's exit (signal ${String(suite.d.proc.signalCode)}); its last stderr:\n${suite.d.stderr().slice(-3000)}\nstdout:\n${suite.d.stdout().slice(-3000)}`).toBe(0);
    removeDir(suite.d.dataDir);
  });
  return suite;
}

/** Signs `user` in on the login page of the daemon at `url`, and waits to leave it. */
export async function signIn(page: Page, url: string, user: { email: string; password: string }): Promise<void> {
  await page.goto(`${url}/login`);
  await page.fill('input[name=email]', user.email);
  await page.fill('input[name=password]', user.password);
  await page.click('button[type=submit]');
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
}

/** Records the page's Content-Security-Policy violations (the console reports them) in `sink`. */
export function watchCsp(page: Page, sink: string[]): Page {
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) sink.push(m.text());
  });
  return page;
}

/**
 * axe-core in the page (evaluate runs outside the page's CSP); serious and critical violations only, unless `every`.
 * `only`: axe's runOnly (tags such as wcag2aa, or rule ids), so a check can be held to a standard or to one rule.
 */
export async function axeViolations(page: Page, opts: { only?: { type: 'tag' | 'rule'; values: readonly string[] }; every?: boolean } = {}): Promise<string[]> {
  if (await page.evaluate<boolean>(`typeof window.axe === 'undefined'`)) await page.evaluate(AXE);
  const options = JSON.stringify({ resultTypes: ['violations'], ...(opts.only ? { runOnly: opts.only } : {}) });
  const found = await page.evaluate<{ id: string; impact: string; targets: string[] }[]>(
    `axe.run(document, ${options}).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ') + (n.failureSummary ? ' [' + n.failureSummary.split('\\n').slice(1, 2).join('').trim() + ']' : '')) })))`,
  );
  return found.filter((v) => opts.every || v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.targets.join(', ')}`);
}
