/**
 * Turns the npm-shipped safetensors into an ONNX file once per machine. The file is named by the
 * sha256 of the weights plus the builder's revision (`<sha256>.g<rev>.onnx`), so neither a new weights
 * version nor a changed graph layout ever reuses an old file, and it is written to a
 * temporary name and renamed into place, so two processes building at once never see half a file
 * (rename is atomic within a directory; the loser's rename just replaces identical bytes).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildBertGraph, type BertConfig } from './bert-graph.js';
import { readSafetensors } from './safetensors.js';

/** Bump whenever buildBertGraph's output changes: old cached files are then ignored, not reused. */
export const GRAPH_REVISION = 2;

export interface CachedGraph {
  path: string;
  sha256: string;
  /** False when an existing file was reused. */
  built: boolean;
}

export async function ensureBertGraph(weightsPath: string, configPath: string, cacheDir: string): Promise<CachedGraph> {
  const sha256 = await hashFile(weightsPath);
  const path = join(cacheDir, `${sha256}.g${GRAPH_REVISION}.onnx`);
  if (await isFile(path)) return { path, sha256, built: false };

  // Once per machine: ~1 s of synchronous work (fp16 widening, transposes, protobuf encoding).
  const config = JSON.parse(await readFile(configPath, 'utf8')) as BertConfig;
  const bytes = buildBertGraph(readSafetensors(await readFile(weightsPath)), config);
  await mkdir(cacheDir, { recursive: true });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, bytes);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return { path, sha256, built: true };
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
