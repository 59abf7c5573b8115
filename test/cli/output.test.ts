import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  OAuthClientError,
  processDiscoveryResponse,
  processTokenResponse,
  validateAuthorizationResponse,
} from '../../src/cli/auth/oauth-client.js';
import { applyHighlights } from '../../src/cli/commands/search.js';
import type { IO } from '../../src/terminal/io.js';
import { ProgressBoard } from '../../src/cli/output/progress.js';
import { loadColumns } from '../../src/cli/output/columns.js';
import { printTable } from '../../src/cli/output/table.js';
import { wrap, wrapFields } from '../../src/cli/output/wrap.js';
import stringWidth from 'string-width';
import { relativeTime } from '../../src/cli/output/time.js';

/** Buffers standing in for the process streams, as a TTY or a pipe (gh's iostreams.Test()). */
function testIO(tty: boolean): IO & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  const stdout = Object.assign(new PassThrough(), { isTTY: tty, columns: 120 });
  const stderr = Object.assign(new PassThrough(), { isTTY: tty, columns: 120 });
  stdout.on('data', (b: Buffer) => (out += b.toString()));
  stderr.on('data', (b: Buffer) => (err += b.toString()));
  return { stdin: new PassThrough(), stdout, stderr, env: {}, out: () => out, err: () => err };
}

const flush = () => new Promise((r) => setImmediate(r));
// What the CLI does before a command that prints runs (commands/index.ts).
await loadColumns();
const NOW = Date.parse('2025-06-01T12:00:00Z');

describe('tables', () => {
  const rows = [
    ['prj_1', 'handbook', 3, { bytes: 2_500_000 }, { time: '2025-06-01T11:57:00Z' }],
    ['prj_2', 'a\tb', 0, { bytes: 12 }, { time: null }],
  ] as const;

  it('on a TTY: header, aligned columns, relative times, human sizes', async () => {
    const io = testIO(true);
    printTable(io, { headers: ['ID', 'NAME', 'DOCS', 'SIZE', 'CREATED'], rows: rows.map((r) => [...r]), now: NOW });
    await flush();
    expect(io.out()).toBe('ID     NAME      DOCS  SIZE     CREATED\nprj_1  handbook  3     2.4 MiB  3 minutes ago\nprj_2  a b       0     12 B     never\n');
  });

  it('on a TTY: columns line up after CJK and emoji names (two terminal columns each), not after their .length', async () => {
    const io = testIO(true);
    printTable(io, { headers: ['NAME', 'DOCS'], rows: [['報告書', 1], ['📚 books', 2], ['plain', 3]], now: NOW });
    await flush();
    expect(io.out()).toBe('NAME      DOCS\n報告書    1\n📚 books  2\nplain     3\n');
  });

  it('wraps by terminal columns: a line of CJK words is never wider than the terminal', () => {
    const lines = wrap('東京都 大阪府 京都府 北海道 神奈川県 愛知県 福岡県 兵庫県 埼玉県 千葉県', 24);
    for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(24);
    expect(lines.length).toBeGreaterThan(2);
    for (const line of wrapFields([{ text: '長い長い長い長い長い長い長い長い長い長い長い長い名前.pdf' }], 24, '  ')) expect(stringWidth(line)).toBeLessThanOrEqual(24);
  });

  it('a time said with a word before it (an expired key): "expired 3 days ago" on a TTY, the moment alone piped', async () => {
    const expiry = [['key_1', { time: '2025-05-29T12:00:00Z', said: 'expired' }], ['key_2', { time: '2025-07-01T12:00:00Z' }], ['key_3', { time: null }]];
    const tty = testIO(true);
    printTable(tty, { headers: ['ID', 'EXPIRES'], rows: expiry, now: NOW });
    const piped = testIO(false);
    printTable(piped, { headers: ['ID', 'EXPIRES'], rows: expiry, now: NOW });
    await flush();
    expect(tty.out()).toBe('ID     EXPIRES\nkey_1  expired 3 days ago\nkey_2  in 1 month\nkey_3  never\n');
    expect(piped.out()).toBe('key_1\t2025-05-29T12:00:00Z\nkey_2\t2025-07-01T12:00:00Z\nkey_3\t\n');
  });

  it('piped: no header, tab-separated, RFC 3339 and exact bytes', async () => {
    const io = testIO(false);
    printTable(io, { headers: ['ID', 'NAME', 'DOCS', 'SIZE', 'CREATED'], rows: rows.map((r) => [...r]), now: NOW });
    await flush();
    expect(io.out()).toBe('prj_1\thandbook\t3\t2500000\t2025-06-01T11:57:00Z\nprj_2\ta b\t0\t12\t\n');
  });

  it('relative times', () => {
    expect(relativeTime('2025-06-01T11:59:50Z', NOW)).toBe('just now');
    expect(relativeTime(new Date(NOW).toISOString(), NOW)).toBe('just now');
    // 50 s and 90 s ago read alike: "1 minute ago", never "a minute ago" beside "1 minute ago".
    expect(relativeTime('2025-06-01T11:59:10Z', NOW)).toBe('1 minute ago');
    expect(relativeTime('2025-06-01T11:58:30Z', NOW)).toBe('1 minute ago');
    expect(relativeTime('2025-06-01T11:00:00Z', NOW)).toBe('1 hour ago');
    expect(relativeTime('2025-05-30T12:00:00Z', NOW)).toBe('2 days ago');
    expect(relativeTime('2025-06-01T13:00:00Z', NOW)).toBe('in 1 hour');
    expect(relativeTime('2025-06-01T12:00:20Z', NOW)).toBe('in a moment');
    expect(relativeTime('2023-05-01T12:00:00Z', NOW)).toBe('2 years ago');
    expect(relativeTime('2025-04-01T12:00:00Z', NOW)).toBe('2 months ago');
    expect(relativeTime('not a time', NOW)).toBe('not a time');
  });
});

describe('search highlights', () => {
  it('marks [start,end) ranges, merging overlaps and clamping out-of-range ones', () => {
    const mark = (s: string) => `<${s}>`;
    expect(applyHighlights('paid vacation days', [[5, 13]], mark)).toBe('paid <vacation> days');
    expect(applyHighlights('paid vacation days', [[14, 18], [0, 4]], mark)).toBe('<paid> vacation <days>');
    expect(applyHighlights('abcdef', [[1, 4], [2, 5]], mark)).toBe('a<bcd><e>f');
    expect(applyHighlights('abc', [[2, 99], [5, 7]], mark)).toBe('ab<c>');
  });
});

describe('progress board', () => {
  it('redraws the rows in place on stderr, each with its phase', () => {
    const io = testIO(true);
    const board = new ProgressBoard(io, ['a.txt', 'b.pdf']);
    board.update(0, 'uploading', 0.5);
    board.stop();
    board.update(1, 'done', 1, 'ready (3 chunks)');
    board.stop();
    return flush().then(() => {
      const frames = io.err().split('\x1b[2A');
      expect(frames).toHaveLength(2);
      expect(frames[1]).toBe(`\x1b[2Ka.txt     uploading   [##########----------]  50%\n\x1b[2Kb.pdf     ready (3 chunks)\n`);
    });
  });

  it('a terminal that reports no width (columns 0) gets whole lines', async () => {
    const io = testIO(true);
    io.stderr.columns = 0;
    const board = new ProgressBoard(io, ['a.txt']);
    board.update(0, 'done', 1, 'ready (1 chunk)');
    board.stop();
    await flush();
    expect(io.err()).toBe('\x1b[2Ka.txt     ready (1 chunk)\n');
  });

  it('never goes backwards: upload and processing are separate phases, a lower fraction or an earlier phase is ignored', async () => {
    const io = testIO(true);
    const board = new ProgressBoard(io, ['a.txt']);
    const frame = () => {
      board.stop();
      return io.err().split('\x1b[2K').at(-1)!.trim();
    };
    board.update(0, 'uploading', 0.79);
    expect(frame()).toBe('a.txt     uploading   [################----]  79%');
    board.update(0, 'uploading', 0.13); // a late progress event of an earlier chunk
    expect(frame()).toBe('a.txt     uploading   [################----]  79%');
    board.update(0, 'processing', 0.13, 'processing');
    expect(frame()).toBe('a.txt     processing  [###-----------------]  13%');
    board.update(0, 'uploading', 1);
    expect(frame()).toBe('a.txt     processing  [###-----------------]  13%');
  });

  it('says "processing" once; a status that adds to the phase (queued) is shown after the meter', async () => {
    const io = testIO(true);
    const board = new ProgressBoard(io, ['a.txt']);
    board.update(0, 'processing', 0, 'queued');
    board.stop();
    await flush();
    expect(io.err().split('\x1b[2K').at(-1)!.trim()).toBe('a.txt     processing  [--------------------]   0%  queued');
  });
});

describe('oauth-client process* (every rejection, then success)', () => {
  const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const reject = async (p: Promise<unknown>) => {
    const e = await p.then(() => null, (err: unknown) => err);
    expect(e).toBeInstanceOf(OAuthClientError);
    return e as OAuthClientError;
  };

  it('processTokenResponse', async () => {
    expect((await reject(processTokenResponse(json(400, { error: 'invalid_grant', error_description: 'code already used' })))).message).toBe(
      'token request failed: invalid_grant: code already used',
    );
    expect((await reject(processTokenResponse(new Response('<html>', { status: 200 })))).message).toBe('"response" body of token request must be a JSON object (HTTP 200)');
    expect((await reject(processTokenResponse(json(200, { token_type: 'Bearer', expires_in: 3600 })))).message).toBe(
      '"response" body "access_token" property must be a non-empty string',
    );
    expect((await reject(processTokenResponse(json(200, { access_token: 'a', token_type: 'mac', expires_in: 3600 })))).message).toBe(
      '"response" body "token_type" property must be "Bearer"',
    );
    expect((await reject(processTokenResponse(json(200, { access_token: 'a', token_type: 'Bearer' })))).message).toBe(
      '"response" body "expires_in" property must be a positive number',
    );
    expect(await processTokenResponse(json(200, { access_token: 'a', token_type: 'bearer', expires_in: 3600, refresh_token: 'r', scope: 'read:documents' }))).toEqual({
      access_token: 'a',
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: 'r',
      scope: 'read:documents',
    });
  });

  it('processDiscoveryResponse keeps every endpoint on the issuer origin', async () => {
    const issuer = 'http://127.0.0.1:7411';
    expect((await reject(processDiscoveryResponse(issuer, json(200, { authorization_endpoint: `${issuer}/a`, token_endpoint: 'https://evil.example/t' })))).message).toBe(
      '"response" body "token_endpoint" property must be a URL on http://127.0.0.1:7411',
    );
    expect((await reject(processDiscoveryResponse(issuer, json(200, { token_endpoint: `${issuer}/t` })))).message).toBe(
      '"response" body "authorization_endpoint" property must be a non-empty string',
    );
    expect(await processDiscoveryResponse(issuer, json(200, { authorization_endpoint: '/api/oauth/authorize', token_endpoint: `${issuer}/api/oauth/token` }))).toEqual({
      issuer,
      authorization_endpoint: `${issuer}/api/oauth/authorize`,
      token_endpoint: `${issuer}/api/oauth/token`,
    });
  });

  it('validateAuthorizationResponse checks state before anything else', () => {
    const v = (q: string) => () => validateAuthorizationResponse(new URLSearchParams(q), 'S1');
    expect(v('code=c&state=S2')).toThrow('the redirect\'s "state" does not match this login attempt');
    expect(v('code=c')).toThrow('the redirect\'s "state" does not match this login attempt');
    // An error from a redirect of another login attempt (or none) is not believed either: state comes first.
    expect(v('error=access_denied&state=S2')).toThrow('the redirect\'s "state" does not match this login attempt');
    expect(v('error=access_denied')).toThrow('the redirect\'s "state" does not match this login attempt');
    expect(v('error=access_denied&error_description=the+user+said+no&state=S1')).toThrow('authorization failed: access_denied: the user said no');
    expect(v('state=S1')).toThrow('"redirect" query "code" parameter must be a non-empty string');
    expect(v('code=c0de&state=S1')()).toBe('c0de');
  });
});
