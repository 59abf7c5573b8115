/**
 * The ObjectStore contract, run against both implementations: a local directory (embedded mode) and S3 on a real
 * Ceph RADOS Gateway (shared mode). Same cases, same expectations: callers must not be able to tell them apart.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DamagedOriginal, FileStore, MissingOriginal } from '../../src/store/objects/originals.js';
import { LocalObjectStore } from '../../src/store/objects/local.js';
import { parseS3Location } from '../../src/store/objects/location.js';
import type { ObjectStore } from '../../src/store/objects/object-store.js';
import { S3ObjectStore } from '../../src/store/objects/s3.js';
import { mountTmpfs, unmount } from '../helpers/fill-disk.js';
import { type Rgw, rgwUnavailable, startRgw } from '../helpers/rgw.js';

const RGW_SKIP = rgwUnavailable();

/** One cluster for the file. */
let rgw: Rgw;
beforeAll(async () => {
  if (!RGW_SKIP) rgw = await startRgw();
});
afterAll(async () => {
  await rgw?.stop();
});

async function collect(it: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const k of it) out.push(k);
  return out.sort();
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of stream) parts.push(p as Buffer);
  return Buffer.concat(parts);
}

function contract(name: string, setup: () => Promise<{ store: ObjectStore; teardown(): Promise<void> }>, skip: string | null) {
  describe.skipIf(skip !== null)(`ObjectStore contract: ${name}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    let store: ObjectStore;
    let teardown: () => Promise<void>;
    const tmp = mkdtempSync(join(tmpdir(), 'docsearch-objects-tmp-'));
    let n = 0;
    const tempFile = (bytes: Buffer | string) => {
      const path = join(tmp, `f${n++}`);
      writeFileSync(path, bytes);
      return path;
    };

    beforeAll(async () => {
      ({ store, teardown } = await setup());
    });
    afterAll(async () => {
      await teardown?.();
      rmSync(tmp, { recursive: true, force: true });
    });

    it('stores a file under a key once; a second put keeps the first bytes; the temp file is consumed both times', async () => {
      const first = tempFile('first bytes');
      expect(await store.putFileIfAbsent('ab/one', first)).toBe('stored');
      expect(existsSync(first)).toBe(false);
      const second = tempFile('second bytes');
      expect(await store.putFileIfAbsent('ab/one', second)).toBe('exists');
      expect(existsSync(second)).toBe(false);
      expect((await store.get('ab/one'))!.toString()).toBe('first bytes');
    });

    it('lets exactly one of eight racing creators of a key store it, whole', async () => {
      const bodies = Array.from({ length: 8 }, (_, i) => Buffer.alloc(64 * 1024 + i, i + 1));
      const results = await Promise.all(bodies.map((b) => store.putFileIfAbsent('race/key', tempFile(b))));
      expect(results.filter((r) => r === 'stored')).toHaveLength(1);
      const stored = (await store.get('race/key'))!;
      expect(bodies.some((b) => b.equals(stored))).toBe(true);
    });

    it('answers null for a missing key from get, open and head, and deleting it is no error', async () => {
      expect(await store.get('no/such')).toBeNull();
      expect(await store.open('no/such')).toBeNull();
      expect(await store.head('no/such')).toBeNull();
      await store.delete('no/such');
    });

    it('streams an object with its size, byte for byte', async () => {
      const bytes = randomBytes(3 * 1024 * 1024 + 17);
      await store.putFileIfAbsent('big/blob', tempFile(bytes));
      const opened = (await store.open('big/blob'))!;
      expect(opened.size).toBe(bytes.length);
      expect((await readAll(opened.body)).equals(bytes)).toBe(true);
      const head = (await store.head('big/blob'))!;
      expect(head.size).toBe(bytes.length);
      expect(Math.abs(head.modified.getTime() - Date.now())).toBeLessThan(5 * 60_000);
    });

    it('replaces with put, and readers see the old or the new bytes', async () => {
      await store.put('meta/info.json', '{"v":1}');
      expect((await store.get('meta/info.json'))!.toString()).toBe('{"v":1}');
      await store.put('meta/info.json', Buffer.from('{"v":2}'));
      expect((await store.get('meta/info.json'))!.toString()).toBe('{"v":2}');
    });

    it('lists the keys under a prefix, and forgets deleted ones', async () => {
      await store.putFileIfAbsent('list/aa/1', tempFile('1'));
      await store.putFileIfAbsent('list/aa/2', tempFile('2'));
      await store.putFileIfAbsent('list/ab/3', tempFile('3'));
      await store.putFileIfAbsent('listing-not', tempFile('x'));
      expect(await collect(store.list('list/'))).toEqual(['list/aa/1', 'list/aa/2', 'list/ab/3']);
      expect(await collect(store.list('list/aa/'))).toEqual(['list/aa/1', 'list/aa/2']);
      await store.delete('list/aa/1');
      expect(await collect(store.list('list/'))).toEqual(['list/aa/2', 'list/ab/3']);
      expect(await store.get('list/aa/1')).toBeNull();
    });

    it('refuses keys that would leave its root', async () => {
      await expect(store.put('/abs', 'x')).rejects.toThrow(/invalid object key/);
      await expect(store.get('')).rejects.toThrow(/invalid object key/);
    });

    it('holds originals by hash (FileStore): a missing one is MissingOriginal, one not matching its hash DamagedOriginal; the sweep sees only old, unreferenced ones', async () => {
      const files = new FileStore(store, join(tmp, 'receiving'));
      await files.init();
      const bytes = Buffer.from('an original');
      const sha = createHash('sha256').update(bytes).digest('hex');
      await files.place(await files.tempFileOf(bytes), sha);
      expect((await files.read(sha)).equals(bytes)).toBe(true);
      expect((await files.stat(sha))!.size).toBe(bytes.length);
      await expect(files.read('0'.repeat(64))).rejects.toBeInstanceOf(MissingOriginal);
      await files.place(await files.tempFileOf(Buffer.from('other bytes')), 'f'.repeat(64));
      await expect(files.read('f'.repeat(64))).rejects.toBeInstanceOf(DamagedOriginal);
      // A temp file that could not be written is an error, not a path to place (its folder is gone here).
      await expect(new FileStore(store, join(tmp, 'no-such-folder')).tempFileOf(bytes)).rejects.toMatchObject({ code: 'ENOENT' });
      const soon = Date.now() + 60_000;
      expect(await files.unreferenced(new Set(), soon)).toContain(sha);
      expect(await files.unreferenced(new Set([sha]), soon)).not.toContain(sha);
      // Placed just now: too young for a sweep that leaves what another replica may be about to record.
      expect(await files.unreferenced(new Set(), Date.now() - 3600_000)).not.toContain(sha);
      await files.remove(sha);
      expect(await files.stat(sha)).toBeNull();
    });

    it('reports itself up', async () => {
      expect(await store.probe()).toEqual({ up: true });
    });
  });
}

contract(
  'local directory',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-objects-'));
    return { store: new LocalObjectStore(dir), teardown: async () => rmSync(dir, { recursive: true, force: true }) };
  },
  null,
);

contract(
  'S3 (Ceph RGW)',
  async () => {
    const root = await S3ObjectStore.connect(parseS3Location(`s3://${rgw.bucket}/some/prefix`, rgw.env()));
    return { store: root.at('objects'), teardown: async () => root.close() };
  },
  RGW_SKIP,
);

describe.skipIf(RGW_SKIP !== null)(`S3ObjectStore on RGW${RGW_SKIP ? ` (skipped: ${RGW_SKIP})` : ''}`, () => {
  const store = () => rgw;

  it('finds that RGW honours conditional PUT, and leaves no probe object behind', async () => {
    const root = await S3ObjectStore.connect(parseS3Location(`s3://${store().bucket}/p`, store().env()));
    try {
      expect(await root.conditionalPutProblem()).toBeNull();
      expect(await collect(root.list())).toEqual([]);
    } finally {
      root.close();
    }
  });

  it('keeps keys under its prefix: another prefix of the bucket sees none of them', async () => {
    const a = await S3ObjectStore.connect(parseS3Location(`s3://${store().bucket}/tenant-a`, store().env()));
    const b = await S3ObjectStore.connect(parseS3Location(`s3://${store().bucket}/tenant-b`, store().env()));
    try {
      await a.put('k', 'a');
      expect(await b.get('k')).toBeNull();
      expect(await collect(b.list())).toEqual([]);
      expect(await collect(a.list())).toEqual(['k']);
    } finally {
      a.close();
      b.close();
    }
  });

  it('reports itself down, with the reason, when the gateway is gone, and up when it is back', async () => {
    const root = await S3ObjectStore.connect(parseS3Location(`s3://${store().bucket}`, store().env()));
    try {
      await store().stopGateway();
      const down = await root.probe();
      expect(down.up).toBe(false);
      expect(down.error).toMatch(/ECONNREFUSED|connect/i);
      await store().startGateway();
      expect(await root.probe()).toEqual({ up: true });
    } finally {
      root.close();
    }
  });
});

const TMPFS = mkdtempSync(join(tmpdir(), 'docsearch-objects-tmpfs-'));
const TMPFS_SKIP = mountTmpfs(TMPFS, 8);
afterAll(() => {
  if (!TMPFS_SKIP) unmount(TMPFS);
  rmSync(TMPFS, { recursive: true, force: true });
});

describe.skipIf(TMPFS_SKIP !== null)(`LocalObjectStore on another file system than the file it is given${TMPFS_SKIP ? ` (skipped: ${TMPFS_SKIP})` : ''}`, () => {
  it('stores a file from the temp folder (no hard link across file systems), keeps its mode, and the first writer wins', async () => {
    // A data directory on its own disk with the temp folder on another: the daemon's first start wrote its secrets
    // key this way and stopped with EXDEV.
    const store = new LocalObjectStore(join(TMPFS, 'data'));
    const aside = mkdtempSync(join(tmpdir(), 'docsearch-objects-aside-'));
    try {
      writeFileSync(join(aside, 'first'), 'first\n', { mode: 0o600 });
      writeFileSync(join(aside, 'second'), 'second\n', { mode: 0o600 });
      expect(await store.putFileIfAbsent('secrets.key', join(aside, 'first'))).toBe('stored');
      expect(await store.putFileIfAbsent('secrets.key', join(aside, 'second'))).toBe('exists');
      expect((await store.get('secrets.key'))!.toString()).toBe('first\n');
      expect(statSync(join(TMPFS, 'data', 'secrets.key')).mode & 0o777).toBe(0o600);
      expect(readdirSync(join(TMPFS, 'data'))).toEqual(['secrets.key']); // no copy left aside
    } finally {
      rmSync(aside, { recursive: true, force: true });
    }
  });
});

describe('parseS3Location: s3://bucket/prefix and the AWS variables', () => {
  it('takes the bucket and prefix from the URL and the rest from the environment', () => {
    expect(
      parseS3Location('s3://my-bucket/team/docs/', {
        AWS_ENDPOINT_URL: 'https://s3.example.com/',
        AWS_REGION: 'eu-west-3',
        AWS_ACCESS_KEY_ID: 'AKID',
        AWS_SECRET_ACCESS_KEY: 'secret',
        AWS_SESSION_TOKEN: 'token',
      }),
    ).toEqual({ bucket: 'my-bucket', prefix: 'team/docs', region: 'eu-west-3', endpoint: 'https://s3.example.com', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: 'token' } });
    expect(parseS3Location('s3://bucket', {})).toEqual({ bucket: 'bucket', prefix: '', region: 'us-east-1' });
  });

  it.each(['http://127.0.0.1:7480', 'http://127.9.9.9', 'http://localhost:9000', 'http://[::1]:7480'])('allows plain http to this machine: %s', (endpoint) => {
    expect(parseS3Location('s3://bucket/p', { AWS_ENDPOINT_URL: endpoint }).endpoint).toBe(endpoint);
  });

  it.each([
    ['s3://bucket/p', { AWS_ENDPOINT_URL: 'http://10.0.0.5:7480' }, /plain http to another machine/],
    ['s3://bucket/p', { AWS_ENDPOINT_URL: 'http://127.0.0.1.example.com' }, /plain http to another machine/],
    ['s3://bucket/p', { AWS_ENDPOINT_URL: 'ftp://127.0.0.1' }, /must be an http\(s\) URL/],
    ['s3://bucket/p', { AWS_SECRET_ACCESS_KEY: 'alone' }, /set both/],
    ['s3://key:secret@bucket/p', {}, /credentials do not go in the storage URL/],
    ['s3://bucket/p?versionId=1', {}, /no query or fragment/],
    ['s3://B/p', {}, /not a valid bucket name/],
    ['gs://bucket/p', {}, /unsupported storage "gs:\/\/…"/],
    ['bucket/p', {}, /is not a URL/],
  ])('refuses %s with %j', (url, env, message) => {
    expect(() => parseS3Location(url, env)).toThrow(message);
  });
});
