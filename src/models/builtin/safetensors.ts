/**
 * Reads a safetensors file (8-byte little-endian header length, JSON header, raw tensor bytes) into
 * fp32 arrays. The built-in weights ship as fp16 to halve the npm download; ONNX Runtime's CPU kernels
 * want fp32, so every F16 tensor is widened here.
 */

export interface Fp32Tensor {
  shape: number[];
  data: Float32Array;
  /** The stored fp16 bit patterns, for a tensor the file keeps as F16 (a view of the file's bytes where aligned). */
  half?: Uint16Array;
}

interface HeaderEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

/** fp16 bit pattern → fp32 value, precomputed once: 65,536 entries is cheaper than decoding 22M weights. */
let fp16Table: Float32Array | undefined;

function halfToFloatTable(): Float32Array {
  if (fp16Table) return fp16Table;
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    if (exp === 0) table[h] = sign * 2 ** -14 * (frac / 1024);
    else if (exp === 0x1f) table[h] = frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
    else table[h] = sign * 2 ** (exp - 15) * (1 + frac / 1024);
  }
  fp16Table = table;
  return table;
}

export function readSafetensors(file: Uint8Array): Map<string, Fp32Tensor> {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  if (file.byteLength < 8) throw new Error('safetensors: file too short');
  const headerLen = Number(view.getBigUint64(0, true));
  if (8 + headerLen > file.byteLength) throw new Error('safetensors: header length exceeds file size');
  const header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + headerLen))) as Record<
    string,
    HeaderEntry | Record<string, string>
  >;
  const dataStart = 8 + headerLen;
  const tensors = new Map<string, Fp32Tensor>();
  const table = halfToFloatTable();
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const { dtype, shape, data_offsets: [begin, end] } = entry as HeaderEntry;
    const count = shape.reduce((a, b) => a * b, 1);
    const start = dataStart + begin;
    if (start + (end - begin) > file.byteLength) throw new Error(`safetensors: tensor ${name} out of bounds`);
    let data: Float32Array;
    let half: Uint16Array | undefined;
    if (dtype === 'F16') {
      data = new Float32Array(count);
      half = new Uint16Array(count);
      for (let i = 0; i < count; i++) data[i] = table[(half[i] = view.getUint16(start + 2 * i, true))]!;
    } else if (dtype === 'F32') {
      data = new Float32Array(count);
      for (let i = 0; i < count; i++) data[i] = view.getFloat32(start + 4 * i, true);
    } else {
      // Integer buffers such as `embeddings.position_ids` are not weights; the graph computes them.
      continue;
    }
    tensors.set(name, half ? { shape, data, half } : { shape, data });
  }
  return tensors;
}
