/**
 * Sources whose servers go away (issue 57 item 2), against the real servers the suite starts: Apache (WebDAV, Git over
 * smart HTTP), Dovecot (IMAP), Ceph's RGW (S3), and a folder that disappears. For each: the server stopped between
 * passes (two passes fail, backing off 30 s then 60 s as docs/sources.md says, nothing removed; it comes back and
 * the next pass takes what changed meanwhile), the server stopped in the middle of a pass (held there by a relay,
 * test/helpers/fault-proxy.ts, so that it is mid-pass however fast the pass), and credentials that stop working on a
 * source that already holds documents (a clear error, nothing removed; the new ones entered, it goes on). Not one
 * document is lost.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { gitWorkTree } from '../helpers/git-work.js';
import { type Apache, apacheUnavailable, startApache } from '../helpers/apache.js';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { type Dovecot, dovecotUnavailable, startDovecot } from '../helpers/dovecot.js';
import { waitFor } from '../helpers/eventually.js';
import { type FaultProxy, faultProxy } from '../helpers/fault-proxy.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';
import { type DocWire, SourceClient, type SourceWire } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const MINUTE = 60_000;
/**
 * How long a wait for a pass or for documents to settle may take: generous, as a waiting deadline (not a bound on
 * behaviour) on a loaded 2-core CI, where the daemon's embedding shares the cores with every other test.
 */
const PATIENCE = 6 * MINUTE;
/** A scenario's whole time: its waits, each of them at most PATIENCE, and more never happens unless one fails. */
const SCENARIO = 20 * MINUTE;
const SKIP = apacheUnavailable() ?? dovecotUnavailable() ?? rgwUnavailable();

/** An item's text: `size` bytes of words that compress poorly (a Git pack carries them about as large). */
function text(word: string, size = 300): string {
  let out = `The ${word} note.\n`;
  let x = [...word].reduce((a, c) => a * 31 + c.charCodeAt(0), 7) >>> 0;
  while (out.length < size) {
    x = (x * 1103515245 + 12345) >>> 0;
    out += `${(x % 46656).toString(36)} `;
    if (out.length % 80 < 4) out += '\n';
  }
  return out;
}

/** What a kind's fault test does at its server. */
interface FaultKind {
  name: string;
  /** The server's port the relay stands in front of. */
  port: number;
  /** Writes (or rewrites) items at the source, by name. */
  write(items: Record<string, string>): Promise<void>;
  /** The source's add request, reaching the server through the relay's port. */
  body(port: number): Record<string, unknown>;
  /** The document name an item gets. */
  docName(item: string): string;
  halt(): Promise<void>;
  resume(): Promise<void>;
  /** The credentials the source holds stop working at the server; `body` gives the ones that work now. */
  rotateCredentials(): Promise<void>;
  /** What a pass that cannot reach the server says. */
  unreachable: RegExp;
  /** The kind lists only what changed since the last pass (Git): an unchanged pass lists nothing. */
  delta?: boolean;
}

describe.skipIf(SKIP !== null)(`sources whose servers go away${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  const dirs = tempDirs('docsearch-source-faults');
  let apache: Apache;
  let dovecot: Dovecot;
  let rgw: Rgw;
  let d: Daemon;
  let user: TestUser;
  let client: SourceClient;
  let root: string;
  const proxies: FaultProxy[] = [];

  beforeAll(async () => {
    root = dirs.make('root');
    [apache, dovecot, rgw] = await Promise.all([startApache(), startDovecot(), startRgw()]);
    d = await startDaemon({ args: ['--sources-allow-private', '--sources-min-interval', '1', '--source-roots', root] });
    user = await addUser(d);
    client = new SourceClient(d, user.apiKey);
  }, PATIENCE);
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail' && d) process.stderr.write(`--- the daemon's last log lines:\n${`${d.stdout()}\n${d.stderr()}`.split('\n').slice(-60).join('\n')}\n`);
  });
  afterAll(async () => {
    for (const p of proxies) await p.close();
    await d?.stop();
    if (d) removeDir(d.dataDir);
    await Promise.all([apache?.stop(), dovecot?.stop(), rgw?.stop()]);
    dirs.removeAll();
  });

  /** The project's documents from the source, by name: id and content. */
  async function held(project: string, source: string): Promise<Map<string, Pick<DocWire, 'id' | 'sha256'>>> {
    const docs = await client.documents(project, source);
    return new Map([...docs.values()].map((x) => [x.filename, { id: x.id, sha256: x.sha256 }]));
  }

  /** Asks for a pass and waits for it to end, the server away: it fails saying so, after `retryMs` it is tried again. */
  async function failsAndBacksOff(project: string, source: string, words: RegExp, retryMs: number): Promise<SourceWire> {
    const failed = await client.sync(project, source, { timeoutMs: PATIENCE });
    expect(failed.status, JSON.stringify(failed)).toBe('error');
    expect(failed.error, JSON.stringify(failed)).toMatch(words);
    expect(Date.parse(String(failed.next_sync)) - Date.parse(String(failed.updated_at))).toBeGreaterThan(retryMs - 2000);
    expect(Date.parse(String(failed.next_sync)) - Date.parse(String(failed.updated_at))).toBeLessThanOrEqual(retryMs);
    return failed;
  }

  async function faults(kind: FaultKind): Promise<void> {
    const proxy = await faultProxy(kind.port);
    proxies.push(proxy);
    // The relay refuses while the server is away, as the server's own port would; stopping, it first ends what it
    // relays (a server that stops ends its connections), so the server is not kept waiting for them to close.
    let away = false;
    const halt = async () => {
      away = true;
      await proxy.refuse();
      await kind.halt();
    };
    const resume = async () => {
      await kind.resume();
      await proxy.accept();
      away = false;
    };
    try {
      await scenario(kind, proxy, halt, resume);
    } finally {
      if (away) await resume();
    }
  }

  async function scenario(kind: FaultKind, proxy: FaultProxy, halt: () => Promise<void>, resume: () => Promise<void>): Promise<void> {
    const project = await client.project(`${kind.name} faults`);
    const first = { alpha: text('alpha'), beta: text('beta'), gamma: text('gamma') };
    await kind.write(first);
    const source = (await client.add(project, { ...kind.body(proxy.port), every: '1h' })).id;
    const firstPass = await client.passAfter(project, source, 0, PATIENCE);
    expect(firstPass.last_result, JSON.stringify(firstPass)).toMatchObject({ added: 3 });
    await client.settled(project, source, 3, PATIENCE);
    const kept = await held(project, source);

    // The server stopped between passes: each pass fails, saying so, and is tried again after 30 s, then 60 s.
    await halt();
    await failsAndBacksOff(project, source, kind.unreachable, 30_000);
    await failsAndBacksOff(project, source, kind.unreachable, 60_000);
    expect(await held(project, source)).toEqual(kept);
    // Back, with one item changed: the next pass takes it, in place; the error is gone.
    await resume();
    await kind.write({ beta: text('betachanged') });
    const back = await client.sync(project, source, { timeoutMs: PATIENCE });
    expect(back.status).toBe('active');
    expect(back.error).toBeUndefined();
    expect(back.last_result).toMatchObject({ changed: 1, deleted: 0 });
    const afterReturn = await held(project, source);
    expect([...afterReturn.keys()].sort()).toEqual([...kept.keys()].sort());
    for (const [name, doc] of kept) expect(afterReturn.get(name)!.id).toBe(doc.id);

    // The server stopped in the middle of a pass: twelve new items of 3 kB, the relay holds the pass after 12 kB
    // (the listing and a few items, or a Git pack midway), the server stops, the connections end. The pass fails,
    // saying so; nothing it had is removed.
    const more = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`more${i}`, text(`more${i}`, 3000)]));
    await kind.write(more);
    proxy.holdAfter(12_000);
    const asked = Date.now();
    expect((await api(d, `/api/v1/projects/${project}/sources/${source}/sync`, { token: user.apiKey, body: {} })).status).toBe(202);
    await waitFor(() => proxy.holding(), PATIENCE, `the ${kind.name} pass held midway`);
    await halt();
    const cut = await client.passAfter(project, source, asked, PATIENCE);
    expect(cut.status, JSON.stringify(cut)).toBe('error');
    expect(cut.error, JSON.stringify(cut)).toMatch(kind.unreachable);
    const midway = await held(project, source);
    for (const [name, doc] of afterReturn) expect(midway.get(name)).toEqual(doc);
    expect(midway.size).toBeLessThan(15);
    // Back: the next pass brings the rest, and what the cut pass had made stays as it was.
    await resume();
    const again = await client.sync(project, source, { timeoutMs: PATIENCE });
    expect(again.status, JSON.stringify(again)).toBe('active');
    await client.settled(project, source, 15, PATIENCE).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(await client.get(project, source))} ${JSON.stringify([...(await client.documents(project, source)).values()].map((x) => [x.filename, x.status]))}`);
    });
    const whole = await held(project, source);
    for (const [name, doc] of midway) expect(whole.get(name)).toEqual(doc);
    expect([...whole.keys()].sort()).toEqual([...Object.keys(first), ...Object.keys(more)].map(kind.docName).sort());

    // The credentials stop working on a source that holds 15 documents: a clear error, nothing removed.
    await kind.rotateCredentials();
    const refused = await client.sync(project, source, { timeoutMs: PATIENCE });
    expect(refused.status).toBe('error');
    expect(refused.error).toMatch(/refused the credentials/);
    expect(await held(project, source)).toEqual(whole);
    // Its owner enters the new ones: the next pass (at once) goes on with every document kept.
    const since = Date.now();
    const patched = await api(d, `/api/v1/projects/${project}/sources/${source}`, { method: 'PATCH', token: user.apiKey, body: { options: kind.body(proxy.port).options } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const fixed = await client.passAfter(project, source, since, PATIENCE);
    expect(fixed.status).toBe('active');
    expect(fixed.last_result).toMatchObject({ added: 0, deleted: 0, unchanged: kind.delta ? 0 : 15 });
    expect(await held(project, source)).toEqual(whole);
  }

  // Apache serves WebDAV and Git: those two take turns (each stops it); Dovecot, RGW and the folder are another's
  // each, so their scenarios run side by side after them (it.concurrent), on the one daemon, cutting the file's time.
  it('WebDAV (Apache mod_dav) stopped between passes and mid-pass, and a password that stops working', async () => {
    const base = join(apache.davDir, 'faults');
    mkdirSync(base, { recursive: true });
    let password = apache.davUser.password;
    await faults({
      name: 'webdav',
      port: Number(new URL(apache.davUrl).port),
      write: async (items) => {
        for (const [name, body] of Object.entries(items)) writeFileSync(join(base, `${name}.txt`), body);
      },
      body: (port) => ({ kind: 'webdav', url: `http://127.0.0.1:${port}/faults/`, options: { username: apache.davUser.name, password } }),
      docName: (item) => `${item}.txt`,
      halt: () => apache.halt(),
      resume: () => apache.resume(),
      rotateCredentials: async () => {
        password = 'a rotated dav password';
        apache.setPassword(password);
      },
      unreachable: /the WebDAV folder http:\/\/127\.0\.0\.1:\d+\/faults\/ could not be read: .*(ECONNREFUSED|Premature close)|the source stopped sending \S+ midway/,
    });
    apache.setPassword(apache.davUser.password);
  }, SCENARIO);

  it('Git over smart HTTP (git http-backend) stopped between passes and mid-pass, and a password that stops working', async () => {
    const work = dirs.make('git-work');
    const { commit } = gitWorkTree(apache.gitDir, 'faults', work);
    let password = apache.davUser.password;
    await faults({
      name: 'git',
      port: Number(new URL(apache.gitUrl).port),
      write: async (items) => {
        for (const [name, body] of Object.entries(items)) writeFileSync(join(work, `${name}.txt`), body);
        commit(`write ${Object.keys(items).join(' ')}`);
      },
      body: (port) => ({ url: `http://127.0.0.1:${port}/private/faults.git`, options: { branch: 'main', username: apache.davUser.name, password } }),
      docName: (item) => `${item}.txt`,
      halt: () => apache.halt(),
      resume: () => apache.resume(),
      rotateCredentials: async () => {
        password = 'a rotated git password';
        apache.setPassword(password);
      },
      // Cut midway, git says what it was reading when the connection ended: the pack (early EOF, a bad pack header)
      // or a sideband packet.
      unreachable: /the repository could not be fetched: (fatal: (unable to access '\S+': Failed to connect|early EOF)|fetch-pack: unexpected disconnect while reading sideband packet|.*fatal: protocol error: bad pack header)/,
      delta: true,
    });
    apache.setPassword(apache.davUser.password);
  }, SCENARIO);

  it.concurrent('IMAP (Dovecot) stopped between passes and mid-pass, and a password that stops working', async () => {
    const delivered = new Map<string, string>();
    const message = (name: string, body: string) =>
      `From: Reports <reports@example.com>\nTo: team@example.com\nSubject: ${name}\nDate: Tue, 03 Mar 2026 10:00:00 +0000\nMessage-ID: <${name}@faults.example.com>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n${body}\n`;
    let password = dovecot.user.password;
    await faults({
      name: 'imap',
      port: dovecot.port,
      write: async (items) => {
        for (const [name, body] of Object.entries(items)) {
          // Saved again with the same Message-ID: the same document, as an edited draft is.
          if (delivered.has(name)) dovecot.remove(delivered.get(name)!);
          delivered.set(name, dovecot.deliver(message(name, body)));
        }
      },
      body: (port) => ({ url: `imap://127.0.0.1:${port}/INBOX`, options: { username: dovecot.user.name, password } }),
      docName: (item) => `${item}.eml`,
      halt: () => dovecot.halt(),
      resume: () => dovecot.resume(),
      rotateCredentials: async () => {
        password = 'a rotated mail password';
        dovecot.setPassword(password);
      },
      unreachable: /the mailbox imap:\/\/127\.0\.0\.1:\d+\/INBOX could not be read: connect ECONNREFUSED|\S+ could not be fetched from the source: Connection not available/,
    });
  }, SCENARIO);

  it.concurrent('S3 (Ceph RGW) stopped between passes and mid-pass, and a secret key that stops working', async () => {
    const accessKeyId = 'FAULTSACCESSKEY00001';
    let secretAccessKey = 'faults-secret-key-one-0000000000000000000';
    await rgw.admin('user', 'create', '--uid=faults', '--display-name=faults', `--access-key=${accessKeyId}`, `--secret-key=${secretAccessKey}`);
    const writer = () => new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey }, requestChecksumCalculation: 'WHEN_REQUIRED' });
    await writer().send(new CreateBucketCommand({ Bucket: 'faults' }));
    await faults({
      name: 's3',
      port: Number(new URL(rgw.endpoint).port),
      write: async (items) => {
        const c = writer();
        for (const [name, body] of Object.entries(items)) await c.send(new PutObjectCommand({ Bucket: 'faults', Key: `notes/${name}.txt`, Body: body }));
      },
      body: (port) => ({ url: 's3://faults/notes/', options: { endpoint: `http://127.0.0.1:${port}`, region: rgw.region, access_key_id: accessKeyId, secret_access_key: secretAccessKey } }),
      docName: (item) => `${item}.txt`,
      halt: () => rgw.stopGateway(),
      resume: () => rgw.startGateway(),
      rotateCredentials: async () => {
        secretAccessKey = 'faults-secret-key-two-0000000000000000000';
        await rgw.admin('key', 'create', '--uid=faults', '--key-type=s3', `--access-key=${accessKeyId}`, `--secret-key=${secretAccessKey}`);
      },
      unreachable: /the bucket faults could not be listed: connect ECONNREFUSED|the source stopped sending \S+ midway/,
    });
  }, SCENARIO);

  it.concurrent('a folder that disappears, or whose share is unmounted (empty), keeps every document and comes back', async () => {
    const dir = join(root, 'share');
    mkdirSync(dir);
    for (const w of ['alpha', 'beta', 'gamma']) writeFileSync(join(dir, `${w}.txt`), text(w));
    const project = await client.project('folder faults');
    const source = (await client.add(project, { url: `file://${dir}`, every: '1h' })).id;
    await client.passAfter(project, source, 0, PATIENCE);
    await client.settled(project, source, 3, PATIENCE);
    const kept = await held(project, source);

    // Gone (the mount point removed): each pass fails, saying so, and backs off; nothing removed.
    const away = join(root, 'away');
    renameSync(dir, away);
    await failsAndBacksOff(project, source, /share cannot be read \(ENOENT\)/, 30_000);
    await failsAndBacksOff(project, source, /share cannot be read \(ENOENT\)/, 60_000);
    expect(await held(project, source)).toEqual(kept);

    // Unmounted: the mount point is there and empty. The deletion guard pauses the source; nothing removed.
    mkdirSync(dir);
    const empty = await client.sync(project, source, { timeoutMs: PATIENCE });
    expect(empty.status).toBe('paused');
    expect(empty.paused_reason).toMatch(/no longer lists any of its 3 documents/);
    expect(await held(project, source)).toEqual(kept);

    // Mounted again, and resumed by its owner: every document as it was.
    rmSync(dir, { recursive: true });
    renameSync(away, dir);
    expect((await api(d, `/api/v1/projects/${project}/sources/${source}`, { method: 'PATCH', token: user.apiKey, body: { status: 'active' } })).status).toBe(200);
    const resumed = await client.sync(project, source, { timeoutMs: PATIENCE });
    expect(resumed.status).toBe('active');
    expect(resumed.last_result).toMatchObject({ deleted: 0, unchanged: 3 });
    expect(await held(project, source)).toEqual(kept);
  }, SCENARIO);
});
