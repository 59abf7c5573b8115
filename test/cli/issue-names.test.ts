/**
 * CLI names an issue spells out and no command had, through the built binary against a real daemon and the web pages
 * it points at. #53: "The CLI gains `--web` to open a result or a search in the browser": `search … --web` and
 * `documents show … --web` give the web page's address (opened on a terminal; printed through a pipe, `{url}` with
 * --json), and that page shows what the command named: the search with its projects and filters, or the document.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { loggedIn, type WebClient } from '../server/web-client.js';
import { type CliSuite, cliSuite } from './cli-env.js';

describe('names the issues spell: --web (#53)', () => {
  let s: CliSuite;
  let web: WebClient;
  let docId: string;
  cliSuite((suite) => (s = suite), { timeoutMs: 60_000 });

  const cli = async (args: string[]) => {
    const res = await runCli(args, { env: s.env });
    expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(0);
    return res.stdout;
  };
  /** The address printed (through a pipe nothing opens a browser), as a path the web client asks for. */
  const printedPath = (stdout: string) => {
    const url = new URL(stdout.trim());
    expect(url.origin).toBe(s.d.url);
    return `${url.pathname}${url.search}`;
  };

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'issue-names-'));
    writeFileSync(join(dir, 'harbour-dues.txt'), 'The harbour dues for the supplier are paid each quarter by the ops team.\n');
    await cli(['projects', 'create', 'ops-files']);
    await cli(['upload', join(dir, 'harbour-dues.txt'), '--project', 'ops-files', '--label', 'unpaid', '--metadata', '{"team":"ops","year":2021}', '--wait']);
    docId = JSON.parse(await cli(['documents', 'list', '--json'])).documents[0].id;
    web = await loggedIn(s.d, s.user);
  }, 120_000);

  it('search --web: the web search page with the query, project and filters, which finds what they find', { timeout: 60_000 }, async () => {
    const filters = ['--type', 'txt', '--since', '2020-01-01', '--meta', 'team=ops', '--meta', 'year>=2020'];
    const path = printedPath(await cli(['search', 'harbour dues', '--web', '--project', 'ops-files', '--label', 'unpaid', ...filters]));
    const params = new URL(path, s.d.url).searchParams;
    expect(new URL(path, s.d.url).pathname).toBe('/search');
    expect(params.get('q')).toBe('harbour dues');
    expect(params.get('labels')).toBe('unpaid');
    expect(params.get('type')).toBe('txt');
    const page = await web.get(path);
    expect(page.status).toBe(200);
    expect(page.text).toContain('harbour-dues.txt');
    // The filters reach the page: one the document misses leaves it out.
    const missed = await web.get(printedPath(await cli(['search', 'harbour dues', '--web', '--label', 'paid', ...filters])));
    expect(missed.status).toBe(200);
    expect(missed.text).not.toContain('harbour-dues.txt');
    expect(JSON.parse(await cli(['search', 'harbour dues', '--web', '--json']))).toEqual({ url: `${s.d.url}/search?q=harbour+dues` });
    // The page lists passages when --passages asks, not because the URL went through a pipe.
    expect(new URL(JSON.parse(await cli(['search', 'harbour dues', '--web', '--passages', '--json'])).url).searchParams.get('view')).toBe('passages');
  });

  it('documents show --web: the document\'s web page', { timeout: 60_000 }, async () => {
    const path = printedPath(await cli(['documents', 'show', 'harbour-dues.txt', '--web']));
    expect(path).toBe(`/documents/${docId}`);
    const page = await web.get(path);
    expect(page.status).toBe(200);
    expect(page.text).toContain('harbour-dues.txt');
    expect(JSON.parse(await cli(['documents', 'show', docId, '--web', '--json']))).toEqual({ url: `${s.d.url}/documents/${docId}` });
  });
});
