/**
 * Originals answer byte ranges (RFC 9110 §14; docs/api.md, The original), as PDF viewers, media players and
 * resumed downloads ask for them: on the API route and the web's, for anyone who may read the document and for
 * nobody else, read from the store as the range only — on the local disk here, on Ceph RGW below.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { nodeRequest } from '../helpers/node-request.js';
import { unmet } from '../helpers/requirement.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { logS3Requests, type S3RequestLog } from '../helpers/s3-request-log.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { makePdf } from '../ingest/pipeline/fixtures.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { loggedIn } from './web-client.js';

interface Answer {
  status: number;
  headers: { get(name: string): string | null };
  body: Buffer;
}

/** One request with exactly these headers (nodeRequest), its headers read as fetch's are. */
async function send(url: string, headers: Record<string, string>, method = 'GET'): Promise<Answer> {
  const res = await nodeRequest(url, headers, method);
  return { ...res, headers: { get: (name) => (res.headers[name] as string | undefined) ?? null } };
}

/** Bytes that differ at every offset near each other, so a range off by one byte shows. */
const TEXT = Buffer.from(Array.from({ length: 400 }, (_, i) => `line ${String(i).padStart(3, '0')} of the ranged original\n`).join(''));

/** A one-page PDF followed by `mb` MiB of other bytes after its end (which readers skip): a large original that ingests in a moment. */
function largePdf(mb: number): Buffer {
  return Buffer.concat([makePdf([['A large original whose parts are read alone.']]), Buffer.from('%'), randomBytes(mb * 1024 * 1024)]);
}

async function upload(d: Daemon, token: string, projectId: string, name: string, bytes: Buffer): Promise<string> {
  const up = await uploadFiles(d, token, [{ name, bytes }], { projectId, query: '?wait=true' });
  expect(up.status, JSON.stringify(up.body)).toBe(200);
  expect(up.body.documents[0].status).toBe('ready');
  return up.body.documents[0].id as string;
}

/** Bytes this process has read through system calls (files, sockets, pipes: Linux's rchar), or why that cannot be known. */
const IO_UNKNOWN = unmet(existsSync('/proc/self/io') ? null : '/proc/<pid>/io is missing (Linux only): the bytes the daemon reads cannot be counted');
const bytesRead = (pid: number): number => Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);

describe('originals answer byte ranges (206), on the API and the web, for those who may read them', () => {
  let d: Daemon;
  let owner: TestUser;
  let viewer: TestUser;
  let stranger: TestUser;
  let textId: string;
  let cookie: string;
  const sha = createHash('sha256').update(TEXT).digest('hex');
  const size = TEXT.length;
  daemonForSuite(async (started) => {
    d = started;
    [owner, viewer, stranger] = [await addUser(d), await addUser(d), await addUser(d)];
    const project = await api(d, '/api/v1/projects', { token: owner.apiKey, body: { name: 'ranged' } });
    expect(project.status).toBe(201);
    textId = await upload(d, owner.apiKey, project.body.id, 'ranged.txt', TEXT);
    const shared = await api(d, `/api/v1/projects/${project.body.id}/members`, { token: owner.apiKey, body: { email: viewer.email, role: 'viewer' } });
    expect(shared.status, JSON.stringify(shared.body)).toBe(201);
    cookie = `ds_session=${(await loggedIn(d, owner)).sessionCookie}`;
  });

  /** The same document on both routes that serve originals, each with its credential. */
  const routes = () =>
    [
      [`${d.url}/api/v1/documents/${textId}/file`, { authorization: `Bearer ${owner.apiKey}` }],
      [`${d.url}/documents/${textId}/file`, { cookie }],
    ] as const;

  it('answers bytes=a-b, a-, -n and ranges past the end with 206, Content-Range and exactly those bytes', async () => {
    for (const [url, credential] of routes()) {
      for (const [range, start, end] of [
        ['bytes=0-0', 0, 0],
        ['bytes=100-199', 100, 199],
        [`bytes=${size - 1}-${size - 1}`, size - 1, size - 1],
        ['bytes=5000-', 5000, size - 1],
        ['bytes=-37', size - 37, size - 1],
        // A last byte past the end, or a suffix longer than the file, stops at the end (§14.1.2).
        [`bytes=10-${size + 1000}`, 10, size - 1],
        [`bytes=-${size * 2}`, 0, size - 1],
        [`bytes=${size - 3}-${size - 2},-${size + 1}`, 0, size - 1],
        // The unit is case-insensitive, and whitespace around a range is allowed.
        ['Bytes= 7-8', 7, 8],
      ] as const) {
        const res = await send(url, { ...credential, range });
        expect([res.status, res.headers.get('content-range')], `${url} ${range}`).toEqual([206, `bytes ${start}-${end}/${size}`]);
        expect(res.body.equals(TEXT.subarray(start, end + 1)), `${url} ${range}`).toBe(true);
        expect(res.headers.get('content-length')).toBe(String(end - start + 1));
        // A 206 carries what the 200 would: validators, caching, type and name.
        expect([res.headers.get('etag'), res.headers.get('accept-ranges'), res.headers.get('cache-control'), res.headers.get('content-type')]).toEqual([
          `"${sha}"`,
          'bytes',
          'private, no-cache',
          'text/plain; charset=utf-8',
        ]);
        expect(res.headers.get('content-disposition')).toMatch(/^inline; filename="ranged.txt"/);
      }
      const whole = await send(url, credential);
      expect([whole.status, whole.headers.get('accept-ranges'), whole.headers.get('content-range')]).toEqual([200, 'bytes', null]);
      expect(whole.body.equals(TEXT)).toBe(true);
    }
  });

  it('answers 416 with Content-Range: bytes */size when no byte is in the range, and ignores a Range it cannot read', async () => {
    for (const [url, credential] of routes()) {
      for (const range of [`bytes=${size}-`, `bytes=${size + 5}-${size + 9}`, 'bytes=-0', `bytes=${size}-,${size + 10}-`, 'bytes=9-2']) {
        const res = await send(url, { ...credential, range, accept: 'application/json' });
        expect([res.status, res.headers.get('content-range')], `${url} ${range}`).toEqual([416, `bytes */${size}`]);
        expect(JSON.parse(res.body.toString()).error.code).toBe('range_not_satisfiable');
        // An error, not the file: nothing a cache would keep or a viewer would stitch in.
        expect([res.headers.get('etag'), res.headers.get('content-disposition'), res.headers.get('cache-control')]).toEqual([null, null, 'no-store']);
      }
      // Not a range this server knows (another unit, no '=', not numbers, an empty part): the whole file (§14.2).
      for (const range of ['items=0-5', 'bytes 0-5', 'bytes=a-b', 'bytes=0-5,', 'bytes=--5', 'bytes=0x10-20']) {
        const res = await send(url, { ...credential, range });
        expect([res.status, res.headers.get('content-range'), res.body.length], `${url} ${range}`).toEqual([200, null, size]);
      }
    }
  });

  it('joins ranges that overlap or touch into one part; ranges that stay apart get the whole file, 200', async () => {
    for (const [url, credential] of routes()) {
      for (const [range, start, end] of [
        ['bytes=0-9,10-19', 0, 19],
        ['bytes=50-80,60-70,81-99', 50, 99],
        [`bytes=-10,${size - 30}-${size - 11}`, size - 30, size - 1],
      ] as const) {
        const res = await send(url, { ...credential, range });
        expect([res.status, res.headers.get('content-range')], `${url} ${range}`).toEqual([206, `bytes ${start}-${end}/${size}`]);
        expect(res.body.equals(TEXT.subarray(start, end + 1))).toBe(true);
      }
      for (const range of ['bytes=0-9,20-29', 'bytes=-10,0-0', `bytes=${Array.from({ length: 50 }, (_, i) => `${i * 20}-${i * 20 + 1}`).join(',')}`]) {
        const res = await send(url, { ...credential, range });
        expect([res.status, res.headers.get('content-type'), res.headers.get('content-range')], `${url} ${range}`).toEqual([200, 'text/plain; charset=utf-8', null]);
        expect(res.body.equals(TEXT)).toBe(true);
      }
    }
  });

  it('If-Range: the ETag or the exact Last-Modified date serves the range; anything else the whole file', async () => {
    for (const [url, credential] of routes()) {
      const lastModified = (await send(url, credential)).headers.get('last-modified')!;
      const earlier = new Date(Date.parse(lastModified) - 1000).toUTCString();
      for (const [ifRange, ranged] of [
        [`"${sha}"`, true],
        [lastModified, true],
        ['"0000000000000000000000000000000000000000000000000000000000000000"', false],
        // A weak tag never matches (strong comparison, §13.1.5), nor a date other than the exact one, nor no validator.
        [`W/"${sha}"`, false],
        [earlier, false],
        ['yesterday', false],
      ] as const) {
        const res = await send(url, { ...credential, range: 'bytes=20-29', 'if-range': ifRange });
        expect(res.status, `${url} If-Range: ${ifRange}`).toBe(ranged ? 206 : 200);
        expect(res.body.equals(ranged ? TEXT.subarray(20, 30) : TEXT)).toBe(true);
      }
      // A copy the client holds already is a 304 before any range (§13.2.2).
      expect((await send(url, { ...credential, range: 'bytes=20-29', 'if-none-match': `"${sha}"` })).status).toBe(304);
    }
  });

  it('HEAD describes the whole file whatever the Range (ranges are defined for GET only), with Accept-Ranges: bytes', async () => {
    for (const [url, credential] of routes()) {
      for (const range of [undefined, 'bytes=0-9', `bytes=${size}-`]) {
        const res = await send(url, { ...credential, ...(range ? { range } : {}) }, 'HEAD');
        expect([res.status, res.headers.get('content-length'), res.headers.get('content-range'), res.headers.get('accept-ranges'), res.body.length], `${url} ${range}`).toEqual([
          200,
          String(size),
          null,
          'bytes',
          0,
        ]);
      }
    }
  });

  it('a viewer of the project gets ranges; anyone else the very 404 of a document that does not exist, whatever the range', async () => {
    const file = (id: string) => `${d.url}/api/v1/documents/${id}/file`;
    const asViewer = await send(file(textId), { authorization: `Bearer ${viewer.apiKey}`, range: 'bytes=-5' });
    expect([asViewer.status, asViewer.headers.get('content-range')]).toEqual([206, `bytes ${size - 5}-${size - 1}/${size}`]);
    expect(asViewer.body.equals(TEXT.subarray(size - 5))).toBe(true);

    const missing = `doc_${textId.slice(4, 13)}${'Z'.repeat(12)}`;
    for (const range of ['bytes=0-9', `bytes=${size}-`, 'bytes=0-0,5-5']) {
      const theirs = await send(file(textId), { authorization: `Bearer ${stranger.apiKey}`, range });
      const none = await send(file(missing), { authorization: `Bearer ${stranger.apiKey}`, range });
      expect([theirs.status, none.status], range).toEqual([404, 404]);
      const error = (a: Answer) => ({ ...JSON.parse(a.body.toString()).error, request_id: undefined });
      expect(error(theirs), range).toEqual(error(none));
      for (const h of ['content-range', 'etag', 'accept-ranges', 'content-disposition']) expect([h, theirs.headers.get(h)]).toEqual([h, none.headers.get(h)]);
    }
    // No session on the web: the sign-in, never bytes.
    const anonymous = await send(`${d.url}/documents/${textId}/file`, { range: 'bytes=0-9' });
    expect(anonymous.status).not.toBe(206);
    expect(anonymous.body.includes(TEXT.subarray(0, 10))).toBe(false);
  });

  it('a stored original that is not the size recorded answers a range with an error, never other bytes at those offsets', async () => {
    const project = await api(d, '/api/v1/projects', { token: owner.apiKey, body: { name: 'damaged' } });
    const bytes = Buffer.from('an original whose stored copy is cut short later\n'.repeat(20));
    const id = await upload(d, owner.apiKey, project.body.id, 'damaged.txt', bytes);
    const stored = createHash('sha256').update(bytes).digest('hex');
    writeFileSync(join(d.dataDir, 'files', stored.slice(0, 2), stored), bytes.subarray(0, 100));
    const res = await send(`${d.url}/api/v1/documents/${id}/file`, { authorization: `Bearer ${owner.apiKey}`, range: 'bytes=50-149' });
    expect([res.status, res.headers.get('content-range'), res.headers.get('etag')]).toEqual([500, null, null]);
    expect(JSON.parse(res.body.toString()).error.code).toBe('internal_error');
  });

  it.skipIf(IO_UNKNOWN !== null)(`reads a range of a large original from the disk alone, not the whole file${IO_UNKNOWN ? ` (skipped: ${IO_UNKNOWN})` : ''}`, async () => {
    const big = largePdf(24);
    const project = await api(d, '/api/v1/projects', { token: owner.apiKey, body: { name: 'large' } });
    const id = await upload(d, owner.apiKey, project.body.id, 'large.pdf', big);
    const url = `${d.url}/api/v1/documents/${id}/file`;
    const auth = { authorization: `Bearer ${owner.apiKey}` };
    const pid = d.proc.pid!;
    const readFor = async (headers: Record<string, string>) => {
      const before = bytesRead(pid);
      const res = await send(url, { ...auth, ...headers });
      return { res, read: bytesRead(pid) - before };
    };
    const middle = Math.floor(big.length / 2);
    const part = await readFor({ range: `bytes=${middle}-${middle + 65_535}` });
    expect([part.res.status, part.res.headers.get('content-range')]).toEqual([206, `bytes ${middle}-${middle + 65_535}/${big.length}`]);
    expect(part.res.body.equals(big.subarray(middle, middle + 65_536))).toBe(true);
    // The range, a request, a database read or two: far below the 24 MiB file.
    expect(part.read).toBeLessThan(2 * 1024 * 1024);
    // The measure sees a whole file's reading (else the bound above would prove nothing).
    const whole = await readFor({});
    expect(whole.res.body.equals(big)).toBe(true);
    expect(whole.read).toBeGreaterThan(big.length);
  });
});

const SKIP = rgwUnavailable();

describe.skipIf(SKIP !== null)(`originals on S3 answer ranges with a ranged GET of the object${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let rgw: Rgw;
  let log: S3RequestLog;
  let d: Daemon;
  let user: TestUser;

  beforeAll(async () => {
    rgw = await startRgw();
    log = await logS3Requests(rgw.endpoint);
    d = await startDaemon({ args: ['--storage', `s3://${rgw.bucket}/ranges`], env: { ...rgw.env(), AWS_ENDPOINT_URL: log.endpoint }, timeoutMs: 60_000 });
    user = await addUser(d);
  });
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    await log?.close();
    await rgw?.stop();
  });

  it('asks the store for the range only (Range on GetObject), and serves exactly those bytes, 416 and HEAD as on disk', async () => {
    const big = largePdf(8);
    const project = await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: 'on s3' } });
    const id = await upload(d, user.apiKey, project.body.id, 'large.pdf', big);
    const sha = createHash('sha256').update(big).digest('hex');
    const url = `${d.url}/api/v1/documents/${id}/file`;
    const auth = { authorization: `Bearer ${user.apiKey}` };
    const objectGets = () => log.requests().filter((r) => r.method === 'GET' && r.path.endsWith(`/ranges/files/${sha.slice(0, 2)}/${sha}`));

    for (const [range, start, end] of [
      ['bytes=1000-1999', 1000, 1999],
      ['bytes=-100', big.length - 100, big.length - 1],
      [`bytes=${big.length - 10}-`, big.length - 10, big.length - 1],
    ] as const) {
      log.reset();
      const res = await send(url, { ...auth, range });
      expect([res.status, res.headers.get('content-range')], range).toEqual([206, `bytes ${start}-${end}/${big.length}`]);
      expect(res.body.equals(big.subarray(start, end + 1)), range).toBe(true);
      expect(objectGets().map((r) => r.range), range).toEqual([`bytes=${start}-${end}`]);
    }

    log.reset();
    const beyond = await send(url, { ...auth, range: `bytes=${big.length}-` });
    expect([beyond.status, beyond.headers.get('content-range')]).toEqual([416, `bytes */${big.length}`]);
    // Refused from the recorded size, without a request to the store.
    expect(objectGets()).toEqual([]);

    const head = await send(url, { ...auth, range: 'bytes=0-9' }, 'HEAD');
    expect([head.status, head.headers.get('content-length'), head.headers.get('accept-ranges')]).toEqual([200, String(big.length), 'bytes']);
    log.reset();
    const whole = await send(url, auth);
    expect([whole.status, whole.body.equals(big)]).toEqual([200, true]);
    expect(objectGets().map((r) => r.range)).toEqual([undefined]);
  });
});
