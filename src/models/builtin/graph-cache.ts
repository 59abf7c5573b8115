/**
 * Turns the npm-shipped safetensors into an ONNX graph once per machine and variant: `<base>.onnx` (the graph)
 * beside `<base>.weights` (its large tensors, which onnxruntime memory-maps), with
 * `<base> = <sha256 of the weights>.g<revision>.<variant>`, so neither a new weights version, a changed graph
 * layout nor another precision ever reuses an old file. Both are written to temporary names and renamed into
 * place, weights first, so two processes building at once never see half a graph (rename is atomic within a
 * directory; the loser's rename just replaces identical bytes).
 *
 * The build runs in a short-lived child process: it holds a few hundred MB at its peak (fp16 widening, transposes,
 * protobuf encoding, the calibration session), which an exited process gives back to the system, while a worker
 * thread's freed memory stays in the daemon (the first start's idle RSS: docs/BENCHMARKS.md, "Memory").
 * The int8 variant is calibrated first (calibration.ts): an fp32 graph with probe outputs is built to a temporary
 * file, run on the calibration sequences, and removed.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { basename, join } from 'node:path';
import { forkModule } from '../../core/module-process.js';
import { OnnxSession } from '../onnx/session.js';
import { type ActivationRanges, type BertConfig, type BertPrecision, buildBertGraph, type Int8Storage } from './bert-graph.js';
import { calibrationSequences, measureActivationRanges } from './calibration.js';
import { readSafetensors } from './safetensors.js';

/** Bump whenever buildBertGraph's output changes: old cached files are then ignored, not reused. */
export const GRAPH_REVISION = 6;

const ROLE = 'docsearch-bert-graph';

export interface GraphVariant {
  precision: BertPrecision;
  /** Only for int8 (see Int8Storage); default `signed`. */
  int8Storage?: Int8Storage;
}

export interface CachedGraph {
  /** The `.onnx` file; its weights file lies beside it. */
  path: string;
  sha256: string;
  /** False when an existing file was reused. */
  built: boolean;
}

/** The model package's files. */
export interface ModelFiles {
  weightsPath: string;
  configPath: string;
  tokenizerPath: string;
}

/** What the child process builds: the graph at `path`, calibrated first (int8) with a temporary graph at `calibrationPath`. */
interface BuildRequest {
  files: ModelFiles;
  path: string;
  calibrationPath: string;
  variant: GraphVariant;
}

interface BuildFailure {
  error: string;
}

/** The variant's part of the file name: `fp32`, `int8s` or `int8u`. */
export function variantName(variant: GraphVariant): string {
  return variant.precision === 'fp32' ? 'fp32' : variant.int8Storage === 'unsigned' ? 'int8u' : 'int8s';
}

export const weightsFileOf = (graphPath: string): string => graphPath.replace(/\.onnx$/, '.weights');

export async function ensureBertGraph(files: ModelFiles, cacheDir: string, variant: GraphVariant = { precision: 'fp32' }): Promise<CachedGraph> {
  const sha256 = await hashFile(files.weightsPath);
  const base = join(cacheDir, `${sha256}.g${GRAPH_REVISION}`);
  const path = `${base}.${variantName(variant)}.onnx`;
  if ((await isFile(path)) && (await isFile(weightsFileOf(path)))) return { path, sha256, built: false };
  await mkdir(cacheDir, { recursive: true });
  await buildInChildProcess({ files, path, calibrationPath: `${base}.calibration.${process.pid}.${randomBytes(4).toString('hex')}.onnx`, variant });
  await removeEarlierRevisions(cacheDir, sha256);
  return { path, sha256, built: true };
}

/**
 * Graphs of these weights from an earlier GRAPH_REVISION are never used again (~90 MB each). A process still
 * running on one keeps its open file (unlinking does not take it away); where the system refuses, it stays.
 */
async function removeEarlierRevisions(cacheDir: string, sha256: string): Promise<void> {
  const earlier = new RegExp(`^${sha256}\\.g(\\d+)\\.`);
  for (const name of await readdir(cacheDir)) {
    const revision = earlier.exec(name)?.[1];
    if (revision !== undefined && Number(revision) < GRAPH_REVISION) await rm(join(cacheDir, name), { force: true }).catch(() => undefined);
  }
}

/** Builds the fp32 graph with probes at `path`, measures the activation ranges with it, and removes it. */
async function calibrate(files: ModelFiles, path: string): Promise<ActivationRanges> {
  try {
    await write(files, path, { precision: 'fp32' }, { probes: true });
    const session = await OnnxSession.open(path, { intraOpThreads: availableParallelism() });
    try {
      return await measureActivationRanges(session, calibrationSequences(files.tokenizerPath));
    } finally {
      await session.close();
    }
  } finally {
    await Promise.all([path, weightsFileOf(path)].map((f) => rm(f, { force: true })));
  }
}

async function buildInChildProcess(request: BuildRequest): Promise<void> {
  const child = forkModule(import.meta.url, [ROLE, JSON.stringify(request)]);
  let failure: BuildFailure | undefined;
  child.on('message', (m: BuildFailure) => (failure = m));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c, s) => resolve([c, s]));
  });
  if (failure) throw new Error(failure.error);
  if (code !== 0) throw new Error(`the graph builder stopped (${signal ?? `exit code ${code}`})`);
}

/** In the child process: calibrate (int8), then build. */
async function build({ files, path, calibrationPath, variant }: BuildRequest): Promise<void> {
  const activationRanges = variant.precision === 'int8' ? await calibrate(files, calibrationPath) : undefined;
  await write(files, path, variant, activationRanges ? { activationRanges } : {});
}

/** Builds one graph, then writes weights and graph under temporary names and renames them into place. */
async function write(files: ModelFiles, path: string, variant: GraphVariant, extra: { activationRanges?: ActivationRanges; probes?: boolean }): Promise<void> {
  const config = JSON.parse(await readFile(files.configPath, 'utf8')) as BertConfig;
  const weightsFile = weightsFileOf(path);
  const encoded = buildBertGraph(readSafetensors(await readFile(files.weightsPath)), config, {
    ...variant,
    ...extra,
    // Small tensors (biases, LayerNorm vectors) stay inline: a page each in the weights file would waste more.
    external: { location: basename(weightsFile), minBytes: 16_384 },
  });
  const suffix = `.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const written: string[] = [];
  try {
    for (const [file, bytes] of [[weightsFile, encoded.data], [path, [encoded.model]]] as const) {
      await writeFile(file + suffix, bytes);
      written.push(file + suffix);
      await rename(file + suffix, file);
      written.pop();
    }
  } catch (err) {
    await Promise.all(written.map((f) => rm(f, { force: true })));
    throw err;
  }
}

/** Streamed, so hashing 45 MB at every start never holds the event loop for long. */
async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

if (process.argv[2] === ROLE && process.send) {
  // The parent waits for the exit; a failure's message goes first, and is flushed before the exit.
  build(JSON.parse(process.argv[3]!) as BuildRequest).then(
    () => process.exit(0),
    (err: unknown) => process.send!({ error: err instanceof Error ? err.message : String(err) } satisfies BuildFailure, () => process.exit(1)),
  );
}
