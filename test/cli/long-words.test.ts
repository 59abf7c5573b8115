/**
 * A server's names may be one word of hundreds of thousands of letters (the CLI talks to any instance, and must not
 * trust a server's sizes): the CLI measured each whole in terminal columns (string-width segments the whole word, in
 * time growing with its square: 17 s for 200,000 Devanagari letters) and cut it with a segmenter that ran out of heap.
 * Through the built CLI on a real pseudo-terminal, against a relay in front of a real daemon that answers with every
 * name made such a word: `documents list`, `projects list` and `search` finish, with the heap held to a fraction of
 * the default, every line within the terminal; `--json` gives the word whole.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { type CliSuite, cliSuite } from './cli-env.js';
import { onTerminal } from './terminal.js';

/** Words of about 200,000 UTF-16 units, no space in them. */
const WORDS: Record<string, string> = {
  Devanagari: 'नमस्ते'.repeat(33_000),
  'CJK (two columns each)': '字'.repeat(200_000),
  'emoji ZWJ sequences': '👨‍💻'.repeat(40_000),
  'combining marks': 'e\u0301'.repeat(100_000),
  'zero-width characters': `a${'\u200b'.repeat(200_000)}`,
  'a letter with spacing marks': `क${'ा'.repeat(200_000)}`,
  'control characters': 'x\x1b[2J\x07'.repeat(40_000),
};

/** The names the relay replaces, wherever they are in an answer. */
const NAMES = new Set(['name', 'filename', 'path', 'title']);

/** `value` with every string under a key in NAMES replaced by `word`. */
function inflate(value: unknown, word: string): unknown {
  if (Array.isArray(value)) return value.map((v) => inflate(v, word));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, NAMES.has(k) && typeof v === 'string' ? word : inflate(v, word)]));
  return value;
}

/**
 * Node's heap for the CLI: the default is about 2 GB (and was run out); the word is 0.4 MB, and the whole answer a
 * few times that.
 */
const HEAP = ['--max-old-space-size=160'];

describe('a server that names things with one word of 200,000 letters', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { timeoutMs: 60_000 });
  let relay: Server;
  let url: string;
  let word = '';

  beforeAll(async () => {
    const up = await uploadFiles(s.d, s.user.apiKey, [{ name: 'moor.md', bytes: Buffer.from('The curlew nests on the open moor in early spring.\n') }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    relay = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const headers: Record<string, string> = { authorization: req.headers.authorization ?? '' };
        if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
        const answer = await fetch(new URL(req.url!, s.d.url), { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
        const type = answer.headers.get('content-type') ?? '';
        const body = type.includes('json') ? JSON.stringify(inflate(await answer.json(), word)) : Buffer.from(await answer.arrayBuffer());
        res.writeHead(answer.status, { 'content-type': type }).end(body);
      });
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  }, 180_000);
  afterAll(() => new Promise<void>((r) => (relay ? relay.close(() => r()) : r())));

  for (const [kind, w] of Object.entries(WORDS)) {
    it(`${kind}: documents, projects and search fit 80 columns; --json keeps the word whole`, { timeout: 240_000 }, async () => {
      word = w;
      const env = { ...s.env, DOCSEARCH_URL: url, NODE_OPTIONS: HEAP.join(' ') };
      for (const args of [['documents', 'list'], ['projects', 'list'], ['search', 'curlew moor', '--mode', 'keyword']]) {
        const out = (await onTerminal(80, args, env)).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
        const what = `${args.join(' ')}:\n${out.slice(0, 500)}…`;
        expect(out, what).not.toMatch(/heap|error/i);
        const lines = out.split('\n').filter((l) => l.trim());
        expect(lines.length, what).toBeGreaterThan(0);
        // Measured only when short enough to be a line of 80 columns (16 units a column is the most these words have
        // but the zero-width one, whose characters take no column: string-width would take minutes over them).
        for (const line of lines.map((l) => l.replaceAll('\u200b', ''))) {
          expect(line.length, `${what}\n${line}`).toBeLessThan(80 * 16);
          expect(stringWidth(line), `${what}\n${line}`).toBeLessThanOrEqual(80);
        }
      }
      const json = await runCli(['documents', 'list', '--json'], { env, timeoutMs: 120_000 });
      expect(json.code, json.stderr).toBe(0);
      const got: string = JSON.parse(json.stdout).documents[0].filename;
      let at = 0;
      while (at < w.length && got[at] === w[at]) at++;
      if (at === w.length && got.length === w.length) at = -1;
      expect({ length: got.length, differs: at, there: got.slice(at, at + 20) }).toEqual({ length: w.length, differs: -1, there: '' });
    });
  }
});
