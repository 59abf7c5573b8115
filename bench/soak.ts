/**
 * Reliability soak (npm run bench:soak -- --minutes N): a real daemon (built binary, built-in model) on
 * loopback, driven the way issue #12 describes, then checked for what it lost.
 *
 * 1. N minutes of mixed load: two users upload SciFact abstracts (1–3 per request) and search, while the
 *    daemon is killed with SIGKILL and restarted `--kills` times, and a burst of bad input (truncated
 *    multipart, a huge Content-Length, 5,000-deep JSON, a bogus Content-Encoding, random bytes as a PDF,
 *    TRACE, a hostile file of every format from test/ingest/formats/hostile-files.ts; on /mcp malformed JSON-RPC,
 *    an unknown tool, a 6 MiB body, a foreign Origin; client ID metadata URLs on internal addresses and a bad
 *    registration) is sent every 30 s.
 * 2. A disk-full episode when run as root (the data directory is then a tmpfs): uploads on the full disk,
 *    then the time from freeing space until a new upload is ready.
 * 3. SIGTERM under keep-alive load: exit code, time to exit, requests served after the signal, pid file.
 * 4. Drain, then settle (idle past the LanceDB prune window), then a fresh start on the same data.
 *
 * Prints requests and errors by status, lost (accepted uploads missing after the restarts), duplicated,
 * stuck (neither ready nor failed at the end), search p50/p95 during ingest, peak and settled RSS against a
 * fresh start, and LanceDB disk use against the same tables compacted without history.
 * `--env K=V` (repeatable) is passed to the daemon (e.g. MALLOC_ARENA_MAX=2 for comparisons).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { addUser, type Daemon, REPO, startDaemon } from '../test/helpers/daemon.js';
import { fillDisk } from '../test/helpers/fill-disk.js';
import { makeHugeImagePdf, makeNestedFormsPdf } from '../test/ingest/build-fixtures.js';
import { hostileFormatFiles } from '../test/ingest/formats/hostile-files.js';

// ---------- options ----------
const argv = process.argv.slice(2);
const opt = (name: string, def: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : def;
};
const MINUTES = opt('minutes', 5);
const KILLS = opt('kills', 5);
const TMPFS_MB = opt('tmpfs-mb', 2048);
// Extra environment for the daemon (`--env K=V`, repeatable); startDaemon already sets MALLOC_ARENA_MAX as the
// launcher's shebang does.
const DAEMON_ENV: Record<string, string> = {};
argv.forEach((a, i) => {
  if (a === '--env' && argv[i + 1]?.includes('=')) {
    const [k, ...v] = argv[i + 1]!.split('=');
    DAEMON_ENV[k!] = v.join('=');
  }
});

// ---------- data ----------
function findScifact(): string {
  for (let dir = REPO; dir !== dirname(dir); dir = dirname(dir)) {
    const p = join(dir, 'shared/eval/scifact');
    if (existsSync(join(p, 'corpus.jsonl'))) return p;
  }
  throw new Error('SciFact not found (looked for shared/eval/scifact above the repository)');
}
const SCIFACT = findScifact();
const readJsonl = <T>(file: string): T[] =>
  readFileSync(join(SCIFACT, file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
const CORPUS = readJsonl<{ title: string; text: string }>('corpus.jsonl').map((d) => `${d.title}\n\n${d.text}\n`);
const QUERIES = readJsonl<{ text: string }>('queries.jsonl').map((q) => q.text);

// ---------- measurements ----------
const byStatus = new Map<string, number>();
const count = (key: string) => byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
let requests = 0;
const searchMs: number[] = [];
const accepted = new Map<string, string>(); // document id → user key
const rss = { peak: 0, samples: [] as { t: number; kb: number; phase: string }[] };
let phase = 'start';
const notes: string[] = [];
let unexpectedExits = 0;

function rssKb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function du(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  if (!existsSync(dir)) return { bytes, files };
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    bytes += statSync(join(e.parentPath, e.name)).size;
    files++;
  }
  return { bytes, files };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const mb = (kb: number) => `${Math.round(kb / 1024)} MB`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------- the daemon ----------
const root = process.getuid?.() === 0;
const base = mkdtempSync(join(tmpdir(), 'docsearch-soak-'));
let tmpfs = false;
if (root) {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_MB}M,mode=0700`, 'tmpfs', base], { stdio: 'pipe' });
    tmpfs = true;
  } catch (err) {
    notes.push(`no tmpfs (${(err as Error).message.split('\n')[0]}): disk-full episode skipped`);
  }
} else notes.push('not root: disk-full episode skipped');
const dataDir = join(base, 'data');
let daemon: Daemon;
const started: Daemon[] = [];
let expectingExit = false;
const logFile = join(tmpdir(), `docsearch-soak-${Date.now()}.log`);

async function start(): Promise<void> {
  daemon = await startDaemon({ dataDir, env: DAEMON_ENV, timeoutMs: 120_000 });
  started.push(daemon);
  expectingExit = false;
  const d = daemon;
  d.proc.once('exit', (code, signal) => {
    if (expectingExit || d !== daemon) return;
    unexpectedExits++;
    notes.push(`daemon died by itself in phase ${phase} (code ${code}, signal ${signal}); restarted`);
    void start();
  });
}

async function kill9(): Promise<void> {
  expectingExit = true;
  const exited = new Promise((r) => daemon.proc.once('exit', r));
  daemon.proc.kill('SIGKILL');
  await exited;
  await start();
}

// ---------- clients ----------
async function call(path: string, init: RequestInit & { token?: string } = {}): Promise<{ status: number; body: any } | null> {
  requests++;
  const headers = new Headers(init.headers);
  if (init.token) headers.set('authorization', `Bearer ${init.token}`);
  try {
    const res = await fetch(daemon.url + path, { ...init, headers, signal: AbortSignal.timeout(120_000) });
    const text = await res.text();
    count(String(res.status));
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body };
  } catch {
    count('no answer');
    return null;
  }
}

async function upload(token: string, files: { name: string; bytes: string | Buffer }[], query = ''): Promise<{ status: number; body: any } | null> {
  const form = new FormData();
  for (const f of files) form.append('file', new Blob([f.bytes]), f.name);
  const res = await call(`/api/v1/upload${query}`, { method: 'POST', body: form, token });
  if (res && (res.status === 200 || res.status === 202)) for (const d of res.body.documents as { id: string }[]) accepted.set(d.id, token);
  return res;
}

let nextDoc = 0;
async function uploader(token: string, until: () => boolean): Promise<void> {
  while (!until()) {
    const n = 1 + Math.floor(Math.random() * 3);
    const files = Array.from({ length: n }, () => {
      const i = nextDoc++ % CORPUS.length;
      return { name: `abstract-${i}.txt`, bytes: CORPUS[i]! };
    });
    await upload(token, files);
    await sleep(3000); // ~1.3 documents/s offered by both users: about what 2 loaded cores ingest
  }
}

async function searcher(token: string, until: () => boolean): Promise<void> {
  while (!until()) {
    const q = QUERIES[Math.floor(Math.random() * QUERIES.length)]!;
    const t0 = performance.now();
    const res = await call('/api/v1/search', { method: 'POST', token, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: q, limit: 10 }) });
    if (res?.status === 200 && phase === 'mixed') searchMs.push(performance.now() - t0);
    await sleep(200);
  }
}

/** One raw HTTP exchange: whatever is written, the status line that comes back (or why none did). */
function raw(request: string | Buffer, waitMs = 5000): Promise<string> {
  requests++;
  const { port } = new URL(daemon.url);
  return new Promise((resolve) => {
    const sock = net.connect(Number(port), '127.0.0.1');
    let got = '';
    const done = (v: string) => {
      clearTimeout(timer);
      sock.destroy();
      count(v);
      resolve(v);
    };
    const timer = setTimeout(() => done('no answer'), waitMs);
    sock.on('data', (d) => {
      got += d.toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      if (m) done(m[1]!);
    });
    sock.on('error', () => done('no answer'));
    sock.write(request);
  });
}

async function badInputBurst(token: string): Promise<void> {
  const auth = `Authorization: Bearer ${token}\r\n`;
  const part = '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="t.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n';
  await raw(`POST /api/v1/upload HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: ${part.length}\r\nConnection: close\r\n\r\n${part}`);
  await raw(`POST /api/v1/upload HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: 10737418240\r\nConnection: close\r\n\r\n${part}`, 3000);
  const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
  const form = new FormData();
  form.append('metadata', deep);
  form.append('file', new Blob(['deep metadata\n']), 'deep.txt');
  await call('/api/v1/upload', { method: 'POST', body: form, token });
  await call('/api/v1/search', { method: 'POST', token, headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' }, body: JSON.stringify({ query: 'x' }) });
  await upload(token, [{ name: 'random.pdf', bytes: Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(32 * 1024)]) }]);
  await raw(`TRACE /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  // /mcp: malformed JSON-RPC (truncated, wrong version, an empty batch, wrong types, 5,000-deep), an unknown tool,
  // a 6 MiB body refused by its Content-Length, a foreign Origin.
  const mcp = (body: string, headers: Record<string, string> = {}) =>
    call('/mcp', { method: 'POST', token, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });
  for (const body of [
    '{"jsonrpc":"2.0","id":1,"meth',
    '{"jsonrpc":"1.0","id":1,"method":"tools/list"}',
    '[]',
    '{"jsonrpc":"2.0","id":{},"method":5,"params":"x"}',
    '['.repeat(5000) + ']'.repeat(5000),
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}',
  ]) {
    await mcp(body);
  }
  await raw(`POST /mcp HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${6 * 1024 * 1024}\r\nConnection: close\r\n\r\n{"jsonrpc":"2.0"`, 3000);
  await mcp('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { origin: 'http://evil.example' });
  // Clients that register themselves: client ID metadata documents on internal addresses (refused before any
  // connection) and a registration with a redirect URI that is not one.
  for (const clientId of ['https://169.254.169.254/latest/meta-data/client.json', 'https://127.0.0.1:1/client.json', 'http://example.org/client.json']) {
    await call(`/api/oauth/authorize?response_type=code&client_id=${encodeURIComponent(clientId)}&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`, {});
  }
  await call('/api/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['javascript:alert(1)'] }) });
  // Hostile previews (issue #44): a declared 16000×16000 image and nested form XObjects, 17 thumbnails at once.
  const hostile = await upload(token, [
    { name: 'huge-image.pdf', bytes: makeHugeImagePdf(16_000) },
    { name: 'nested-forms.pdf', bytes: makeNestedFormsPdf(24) },
  ]);
  const ids = ((hostile?.body?.documents ?? []) as { id: string }[]).map((d) => d.id);
  if (ids.length > 0) await Promise.all(Array.from({ length: 17 }, (_, i) => call(`/api/v1/documents/${ids[i % ids.length]}/thumbnail`, { token })));
  // Hostile files of every format (#41): a zip bomb, XXE and billion laughs, deep HTML, huge sheet and image, an
  // e-mail of 10,000 parts; each must fail its own document (after the first burst they are duplicates).
  await upload(token, hostileFormatFiles().map(([name, bytes]) => ({ name, bytes })));
}

async function listAll(token: string): Promise<{ id: string; status: string; sha256: string; project_id: string }[]> {
  const out: { id: string; status: string; sha256: string; project_id: string }[] = [];
  let cursor: string | null = null;
  do {
    const res = await call(`/api/v1/documents?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token });
    if (!res || res.status !== 200) throw new Error(`listing documents failed: ${res?.status}`);
    out.push(...res.body.documents);
    cursor = res.body.next_cursor;
  } while (cursor);
  return out;
}

// ---------- disk ----------
/** The LanceDB tables copied and compacted with no history: what the same data needs at least. */
async function compactedWithoutHistory(lanceDir: string): Promise<{ bytes: number; files: number }> {
  const copy = mkdtempSync(join(tmpdir(), 'docsearch-soak-lance-'));
  try {
    cpSync(lanceDir, copy, { recursive: true });
    const db = await lancedb.connect(copy);
    for (const name of await db.tableNames()) {
      const t = await db.openTable(name);
      await t.optimize({ cleanupOlderThan: new Date(Date.now() + 1000), deleteUnverified: true });
    }
    db.close();
    return du(copy);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

// ---------- the run ----------
async function main(): Promise<void> {
  const cpuModel = cpus()[0]?.model ?? 'unknown';
  const load0 = loadavg();
  await start();
  const users = [await addUser(daemon), await addUser(daemon)];
  const sampler = setInterval(() => {
    const kb = rssKb(daemon?.proc.pid);
    rss.peak = Math.max(rss.peak, kb);
    rss.samples.push({ t: Date.now(), kb, phase });
  }, 1000);

  // 1. mixed load with kill -9 cycles and bad-input bursts
  phase = 'mixed';
  const endAt = Date.now() + MINUTES * 60_000;
  const over = () => Date.now() >= endAt;
  const clients = users.flatMap((u) => [uploader(u.apiKey, over), searcher(u.apiKey, over)]);
  const chaos = (async () => {
    let kills = 0;
    let nextBurst = Date.now() + 30_000;
    const killEvery = (MINUTES * 60_000) / (KILLS + 1);
    let nextKill = Date.now() + killEvery;
    while (!over()) {
      if (kills < KILLS && Date.now() >= nextKill) {
        await kill9();
        kills++;
        nextKill += killEvery;
      }
      if (Date.now() >= nextBurst) {
        await badInputBurst(users[0]!.apiKey);
        nextBurst += 30_000;
      }
      await sleep(500);
    }
    notes.push(`${kills} kill -9 cycles`);
  })();
  await Promise.all([...clients, chaos]);

  // 2. disk full
  let diskFull: { refused: string; resumedMs: number | null } | null = null;
  if (tmpfs) {
    phase = 'disk-full';
    const filler = join(base, 'filler');
    fillDisk(filler);
    const statuses: number[] = [];
    // New bytes each time: content already in the project is a duplicate, answered without writing anything.
    const fresh = (label: string) => `${CORPUS[(nextDoc++) % CORPUS.length]!}\n${label} ${Date.now()}\n`;
    // Filled again before each upload: the daemon's own history pruning may free a little space meanwhile.
    for (let i = 0; i < 5; i++, fillDisk(filler)) statuses.push((await upload(users[1]!.apiKey, [{ name: `full-${i}.txt`, bytes: fresh(`full-disk probe ${i}`) }]))?.status ?? 0);
    const health = await call('/api/v1/health');
    await sleep(5000);
    const alive = daemon.proc.exitCode === null;
    rmSync(filler, { force: true });
    const freed = Date.now();
    // Resumed: a document uploaded once space is back becomes ready (and so does whatever was accepted before).
    let resumedMs: number | null = null;
    let probe: string | undefined;
    while (Date.now() - freed < 120_000) {
      if (!probe) {
        const res = await upload(users[1]!.apiKey, [{ name: 'after-full.txt', bytes: fresh('after the disk-full episode') }]);
        if (res && (res.status === 200 || res.status === 202)) probe = (res.body.documents as { id: string }[])[0]!.id;
      } else if ((await call(`/api/v1/documents/${probe}`, { token: users[1]!.apiKey }))?.body?.status === 'ready') {
        resumedMs = Date.now() - freed;
        break;
      }
      await sleep(500);
    }
    diskFull = { refused: `${statuses.join(', ')}; health ${health?.status} (storage ${health?.body?.components?.storage?.status}); daemon up: ${alive}`, resumedMs };
  }

  // 3. SIGTERM under keep-alive load
  phase = 'sigterm';
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const { port } = new URL(daemon.url);
  let signalAt = Infinity;
  const served: number[] = []; // when each request answered after the signal was sent
  let keepAliveRequests = 0;
  let stopLoad = false;
  const get = () =>
    new Promise<void>((resolve) => {
      const sentAt = Date.now();
      const req = http.get({ host: '127.0.0.1', port, path: '/api/v1/health', agent }, (res) => {
        res.resume();
        res.on('end', () => {
          keepAliveRequests++;
          if (sentAt > signalAt) served.push(sentAt);
          resolve();
        });
      });
      req.on('error', () => {
        stopLoad = Date.now() > signalAt;
        resolve();
      });
    });
  const loops = Array.from({ length: 8 }, async () => {
    while (!stopLoad) await get();
  });
  await sleep(2000);
  expectingExit = true;
  const exited = new Promise<{ code: number | null; at: number }>((r) => daemon.proc.once('exit', (code) => r({ code, at: Date.now() })));
  signalAt = Date.now();
  daemon.proc.kill('SIGTERM');
  const ex = await Promise.race([exited, sleep(30_000).then(() => ({ code: -1, at: Date.now() }))]);
  stopLoad = true;
  await Promise.all(loops);
  agent.destroy();
  // The signal reaches the daemon's event loop some milliseconds after kill() returns; requests sent in between
  // are not yet refused. What must be zero is a request sent after the daemon logged that it began to drain.
  const drainAt = Date.parse(/"time":"([^"]+)"[^\n]*"msg":"shutting down"/.exec(daemon.stdout().split('\n').reverse().join('\n'))?.[1] ?? '');
  const sigterm = {
    code: ex.code,
    exitMs: ex.at - signalAt,
    servedAfter: served.length,
    servedAfterDrain: Number.isNaN(drainAt) ? NaN : served.filter((t) => t > drainAt).length,
    signalToDrainMs: drainAt - signalAt,
    keepAliveRequests,
    pidFileLeft: existsSync(join(dataDir, 'daemon.pid')),
  };
  if (ex.code === -1) {
    daemon.proc.kill('SIGKILL');
    await exited;
  }

  // 4. drain, settle, fresh start
  phase = 'drain';
  await start();
  const drainStart = Date.now();
  let docs: Awaited<ReturnType<typeof listAll>> = [];
  for (;;) {
    docs = (await Promise.all(users.map((u) => listAll(u.apiKey)))).flat();
    if (docs.every((d) => d.status === 'ready' || d.status === 'failed') || Date.now() - drainStart > 10 * 60_000) break;
    await sleep(3000);
  }
  const drainMs = Date.now() - drainStart;
  const present = new Set(docs.map((d) => d.id));
  const lost = [...accepted.keys()].filter((id) => !present.has(id));
  const seen = new Map<string, number>();
  for (const d of docs) seen.set(`${d.project_id}/${d.sha256}`, (seen.get(`${d.project_id}/${d.sha256}`) ?? 0) + 1);
  const duplicated = [...seen.values()].filter((n) => n > 1).length;
  const stuck = docs.filter((d) => d.status !== 'ready' && d.status !== 'failed').length;
  const failed = docs.filter((d) => d.status === 'failed').length;

  phase = 'settle';
  await sleep(70_000); // past the prune window (60 s) and its follow-up pass
  const settledKb = Math.round(rss.samples.slice(-5).reduce((a, s) => a + s.kb, 0) / 5);
  const lanceDir = join(dataDir, 'lancedb');
  const lanceUsed = du(lanceDir);
  const tmpLeft = existsSync(join(dataDir, 'files/tmp')) ? readdirSync(join(dataDir, 'files/tmp')).length : 0;
  const wal = existsSync(join(dataDir, 'docsearch.db-wal')) ? statSync(join(dataDir, 'docsearch.db-wal')).size : 0;

  phase = 'fresh';
  expectingExit = true;
  await daemon.stop();
  await start();
  for (let i = 0; i < 20; i++) {
    await call('/api/v1/search', { method: 'POST', token: users[i % 2]!.apiKey, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: QUERIES[i]!, limit: 10 }) });
  }
  await sleep(5000);
  const freshKb = rssKb(daemon.proc.pid);
  expectingExit = true;
  await daemon.stop();
  clearInterval(sampler);
  const compacted = await compactedWithoutHistory(lanceDir);

  const load1 = loadavg();
  const statusLine = [...byStatus.entries()].sort().map(([k, v]) => `${k}: ${v}`).join(', ');
  console.log(`
## Soak: ${MINUTES} min mixed load, ${KILLS} kill -9 cycles${tmpfs ? ', disk full' : ''}, SIGTERM under keep-alive load

machine: ${cpus().length} × ${cpuModel}; load average ${load0.map((l) => l.toFixed(1)).join('/')} at start, ${load1.map((l) => l.toFixed(1)).join('/')} at end${Object.keys(DAEMON_ENV).length ? `; daemon env ${JSON.stringify(DAEMON_ENV)}` : ''}

| measure | value |
|---|---|
| requests | ${requests} |
| answers by status | ${statusLine} |
| documents accepted / at the end | ${accepted.size} / ${docs.length} (failed: ${failed}) |
| lost | ${lost.length} |
| duplicated | ${duplicated} |
| stuck (neither ready nor failed) | ${stuck} (drain took ${Math.round(drainMs / 1000)} s) |
| unexpected daemon exits | ${unexpectedExits} |
| search p50 / p95 during ingest | ${pct(searchMs, 50).toFixed(0)} / ${pct(searchMs, 95).toFixed(0)} ms (${searchMs.length} searches) |
| RSS peak / settled / fresh start | ${mb(rss.peak)} / ${mb(settledKb)} / ${mb(freshKb)} (settled ÷ fresh ${(settledKb / freshKb).toFixed(2)}) |
| LanceDB used / compacted without history | ${(lanceUsed.bytes / 1048576).toFixed(1)} MB in ${lanceUsed.files} files / ${(compacted.bytes / 1048576).toFixed(1)} MB in ${compacted.files} files (${(lanceUsed.bytes / compacted.bytes).toFixed(2)}×) |
| SQLite WAL after settling; upload temp files left | ${(wal / 1048576).toFixed(1)} MB; ${tmpLeft} |
| SIGTERM | exit ${sigterm.code} after ${sigterm.exitMs} ms; ${sigterm.servedAfter} keep-alive requests sent after the signal were served (of ${sigterm.keepAliveRequests}), ${sigterm.servedAfterDrain} of them sent after the daemon began draining ${sigterm.signalToDrainMs} ms after the signal; pid file left: ${sigterm.pidFileLeft} |
${diskFull ? `| disk full | uploads answered ${diskFull.refused}; after freeing space the next document was ready in ${diskFull.resumedMs === null ? 'NOT within 120 s' : `${(diskFull.resumedMs / 1000).toFixed(1)} s`} |\n` : ''}
${notes.map((n) => `- ${n}`).join('\n')}
${lost.length ? `\nlost ids: ${lost.slice(0, 20).join(', ')}` : ''}`);
}

try {
  await main();
} finally {
  if (daemon! && daemon.proc.exitCode === null && daemon.proc.signalCode === null) {
    expectingExit = true;
    daemon.proc.kill('SIGKILL');
  }
  writeFileSync(logFile, started.map((d, i) => `=== daemon ${i + 1}\n${d.stderr()}\n${d.stdout()}`).join('\n'));
  console.log(`daemon logs: ${logFile}`);
  if (tmpfs) execFileSync('umount', ['-l', base], { stdio: 'pipe' });
  rmSync(base, { recursive: true, force: true });
}
