/**
 * Which int8 weight storage suits this CPU (see Int8Storage in bert-graph.ts). Signed weights need a u8×s8
 * product that does not saturate: x86 with AVX-512 VNNI or AVX-VNNI (VPDPBUSD), or arm64 (its dot-product
 * instructions); on any other x86, or where the CPU's features cannot be read, unsigned weights (onnxruntime's
 * u8×u8 path) give the same integers without the risk.
 */
import { readFileSync } from 'node:fs';
import type { Int8Storage } from './bert-graph.js';

export function int8StorageFor(arch: string, cpuFlags: string[] | undefined): Int8Storage {
  if (arch === 'arm64') return 'signed';
  if (arch === 'x64' && cpuFlags && (cpuFlags.includes('avx512_vnni') || cpuFlags.includes('avx_vnni'))) return 'signed';
  return 'unsigned';
}

let cached: Int8Storage | undefined;

export function int8StorageForThisCpu(): Int8Storage {
  cached ??= int8StorageFor(process.arch, linuxCpuFlags());
  return cached;
}

function linuxCpuFlags(): string[] | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return /^flags\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.split(/\s+/);
  } catch {
    return undefined;
  }
}
