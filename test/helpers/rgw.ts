/**
 * A real S3 store for tests: Ceph's RADOS Gateway on a throwaway single-node cluster (one monitor, one memstore
 * OSD capped at 1 GiB, pool size 1, auth none), everything under a temp dir, on free loopback ports. One cluster
 * per test file (`startRgw()` in beforeAll, `stop()` in afterAll): it serves in a few seconds. Tests that need it
 * skip with `rgwUnavailable()`'s reason where the Debian packages (radosgw, ceph-mon, ceph-osd) or root are missing.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { sleep } from './eventually.js';
import { freePort } from './ports.js';
import { unmet } from './requirement.js';

const run = promisify(execFile);

const BINARIES = ['ceph-mon', 'ceph-osd', 'radosgw', 'radosgw-admin', 'monmaptool', 'ceph'] as const;

export interface Rgw {
  /** http://127.0.0.1:PORT */
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** A bucket created for the test file. */
  bucket: string;
  /** The standard AWS_* variables that point a process at this store. */
  env(): Record<string, string>;
  /** LanceDB's storage options for this store. */
  storageOptions(): Record<string, string>;
  client(): S3Client;
  /** Another bucket (tests that want an empty store). */
  createBucket(name: string): Promise<void>;
  /** Stops only the gateway (the cluster keeps the data): the store is unreachable until `startGateway()`. */
  stopGateway(): Promise<void>;
  startGateway(): Promise<void>;
  /** Runs `radosgw-admin` on the cluster (users, keys); its stdout. */
  admin(...args: string[]): Promise<string>;
  /** Stops everything and removes the temp dir. */
  stop(): Promise<void>;
  /** Process ids of the monitor, the OSD and the gateway while they run. */
  pids(): number[];
}

function onPath(bin: string): boolean {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(dir, bin), constants.X_OK);
      return true;
    } catch {
      // not in this one
    }
  }
  return false;
}

/** Why RGW cannot run here, or null when it can (under CI a reason fails the run: requirement.ts). */
export function rgwUnavailable(): string | null {
  return unmet(rgwProblem());
}

function rgwProblem(): string | null {
  const missing = BINARIES.filter((b) => !onPath(b));
  if (missing.length) return `Ceph RGW is not installed (missing ${missing.join(', ')}; Debian: apt-get install radosgw ceph-mon ceph-osd)`;
  if (process.getuid?.() !== 0) return 'Ceph RGW tests need root (the monitor, OSD and gateway run as this user)';
  return null;
}

/** A stopped daemon can linger as a zombie until reaped: alive means a /proc entry whose state is not Z. */
function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL if it has not gone within `graceMs`. */
async function stopProcess(proc: ChildProcess | undefined, graceMs = 10_000): Promise<void> {
  if (!proc || !alive(proc.pid)) return;
  proc.kill('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive(proc.pid) && Date.now() < deadline) await sleep(20);
  if (alive(proc.pid)) {
    proc.kill('SIGKILL');
    while (alive(proc.pid)) await sleep(20);
  }
}

function cephConf(dir: string, fsid: string, monPort: number, rgwPort: number): string {
  return `[global]
fsid = ${fsid}
mon host = v2:127.0.0.1:${monPort}
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
ms cluster mode = crc
ms service mode = crc
ms client mode = crc
ms mon cluster mode = crc
ms mon service mode = crc
ms mon client mode = crc
mon allow pool size one = true
mon warn on pool no redundancy = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd crush chooseleaf type = 0
paxos propose interval = 0.1
osd objectstore = memstore
memstore device bytes = 1073741824
keyring = /dev/null
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
pid file = ${dir}/run/$name.pid
log file = ${dir}/$name.log
mon cluster log file = ${dir}/cluster.log
mon data = ${dir}/mon
osd data = ${dir}/osd
rgw data = ${dir}/rgw
rgw enable lc threads = false
rgw frontends = beast endpoint=127.0.0.1:${rgwPort}
`;
}

function logTail(dir: string): string {
  return ['mon.a', 'osd.0', 'client.rgw']
    .map((name) => join(dir, `${name}.log`))
    .filter((file) => existsSync(file))
    .map((file) => `--- ${file}\n${readFileSync(file, 'utf8').split('\n').slice(-15).join('\n')}`)
    .join('\n');
}

class GatewayExited extends Error {}

async function untilServing(endpoint: string, proc: ChildProcess, dir: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(endpoint, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not up yet
    }
    if (!alive(proc.pid)) {
      if (proc.exitCode === null && proc.signalCode === null) await new Promise((r) => proc.once('exit', r));
      const how = proc.signalCode ?? `code ${proc.exitCode}`;
      throw new GatewayExited(`radosgw exited (${how}) before serving\n${logTail(dir)}`);
    }
    if (Date.now() > deadline) throw new Error(`radosgw did not serve within ${timeoutMs} ms\n${logTail(dir)}`);
    await sleep(50);
  }
}

/** Starts a single-node Ceph cluster with a gateway, an S3 user and a bucket. */
export async function startRgw(opts: { bucket?: string; timeoutMs?: number } = {}): Promise<Rgw> {
  const reason = rgwUnavailable();
  if (reason) throw new Error(reason);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-rgw-'));
  const [monPort, rgwPort] = [await freePort(), await freePort()];
  const conf = join(dir, 'ceph.conf');
  const fsid = randomUUID();
  for (const sub of ['mon', 'osd', 'run', 'rgw']) mkdirSync(join(dir, sub));
  writeFileSync(conf, cephConf(dir, fsid, monPort, rgwPort));
  const endpoint = `http://127.0.0.1:${rgwPort}`;
  const accessKeyId = `DS${randomBytes(9).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  const region = 'us-east-1';
  const bucket = opts.bucket ?? `docsearch-${randomBytes(4).toString('hex')}`;
  // The SDK warns that its future releases need Node 22; the pinned one runs here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const daemon = (bin: string, args: string[]) => spawn(bin, ['-f', '-c', conf, ...args], { cwd: dir, stdio: 'ignore' });

  let mon: ChildProcess | undefined;
  let osd: ChildProcess | undefined;
  let gateway: ChildProcess | undefined;
  let s3: S3Client | undefined;
  const stopAll = async () => {
    s3?.destroy();
    // One at a time, gateway first: stopped together, radosgw hung waiting for the cluster.
    await stopProcess(gateway);
    await stopProcess(osd);
    await stopProcess(mon);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await run('monmaptool', ['--create', '--add', 'a', `v2:127.0.0.1:${monPort}`, '--fsid', fsid, join(dir, 'monmap')]);
    await run('ceph-mon', ['--mkfs', '-i', 'a', '--monmap', join(dir, 'monmap'), '-c', conf]);
    mon = daemon('ceph-mon', ['-i', 'a']);
    const osdUuid = randomUUID();
    await run('ceph', ['-c', conf, '--connect-timeout', String(Math.ceil(timeoutMs / 1000)), 'osd', 'new', osdUuid], { timeout: timeoutMs });
    await run('ceph-osd', ['-i', '0', '--mkfs', '--osd-uuid', osdUuid, '-c', conf]);
    osd = daemon('ceph-osd', ['-i', '0']);
    // Retried: CI once saw radosgw die right after "starting handler: beast", without a line saying why.
    const startGateway = async () => {
      for (let attempt = 1; ; attempt++) {
        gateway = daemon('radosgw', ['-n', 'client.rgw']);
        try {
          return await untilServing(endpoint, gateway, dir, timeoutMs);
        } catch (err) {
          if (!(err instanceof GatewayExited) || attempt === 3) throw err;
          console.warn(`${err.message.split('\n')[0]}; starting it again`);
        }
      }
    };
    // The user after the gateway: run together, both create the default zone and its pools, and race.
    await startGateway();
    await run('radosgw-admin', ['-c', conf, 'user', 'create', '--uid=docsearch-test', '--display-name=docsearch test', `--access-key=${accessKeyId}`, `--secret-key=${secretAccessKey}`], {
      timeout: timeoutMs,
    });
    const client = () =>
      new S3Client({
        endpoint,
        region,
        forcePathStyle: true,
        credentials: { accessKeyId, secretAccessKey },
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
    s3 = client();
    const createBucket = async (name: string) => {
      await s3!.send(new CreateBucketCommand({ Bucket: name }));
    };
    await createBucket(bucket);
    return {
      endpoint,
      accessKeyId,
      secretAccessKey,
      region,
      bucket,
      env: () => ({ AWS_ENDPOINT_URL: endpoint, AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_REGION: region }),
      storageOptions: () => ({ endpoint, aws_access_key_id: accessKeyId, aws_secret_access_key: secretAccessKey, region, allow_http: 'true' }),
      client,
      createBucket,
      stopGateway: () => stopProcess(gateway),
      startGateway,
      admin: async (...args: string[]) => (await run('radosgw-admin', ['-c', conf, ...args], { timeout: timeoutMs })).stdout,
      stop: stopAll,
      pids: () => [mon, osd, gateway].flatMap((p) => (p?.pid !== undefined && alive(p.pid) ? [p.pid] : [])),
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
