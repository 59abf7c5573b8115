/**
 * Builds an ONNX graph of a BERT encoder (all-MiniLM-L6-v2) from safetensors weights.
 *
 * Inputs `input_ids` and `attention_mask` (int64 [batch, seq]); output `sentence_embedding` (float [batch, hidden]):
 * the last hidden states' mean over the unmasked tokens, L2-normalised, as sentence-transformers pools. Pooling in
 * the graph spares the daemon a [batch, seq, hidden] copy per batch (~400 KB a passage) only to average it; the
 * states themselves are a second output, `token_embeddings`, fetched only for passages whose units are pooled.
 *
 * - Opset 17 (native LayerNormalization) for the embeddings; each encoder layer uses onnxruntime's
 *   `com.microsoft` CPU kernels — Attention (fused QKV projection, scaled-dot-product, mask),
 *   SkipLayerNormalization (residual + bias + LayerNorm) and BiasGelu (exact erf GELU). onnxruntime is
 *   our only runtime, and its optimiser does not recognise these patterns in a hand-built graph on its
 *   own; the fused kernels make fewer passes over the activations than ~17 standard ops per layer.
 * - PyTorch Linear weights are stored [out, in] and MatMul wants [in, out]: every dense weight is
 *   transposed here (fp16 → fp32 already happened in safetensors.ts).
 * - Single-sentence input only, so the token-type embedding (row 0) is folded into the position table
 *   instead of being an input.
 * - The word table (30522 × 384, half of all weights) stays fp16 as shipped; only the gathered rows are
 *   widened (exact: every value came from fp16).
 * - `int8`: the four dense layers of each block run as integer matrix products — weights quantised here,
 *   symmetric per output column. Activations are quantised in the graph so that a text's vector depends on its own
 *   tokens only, never on the texts or padding sharing its pass (one scale per tensor per pass, DynamicQuantizeMatMul,
 *   moved a passage's unit vectors by up to 0.009 with its batch mates: bench/results/embedding-determinism.md):
 *   for the output and feed-forward products a token (row) at a time — s = max|x_row| / 127, u8 = round(x / s) + 128
 *   (QuantizeLinear along the rows), onnxruntime's u8×s8 MatMulIntegerToFloat (× the weight's column scales), then
 *   × s; for the QKV projection (QAttention takes one input scale) with one constant scale from calibration. So the
 *   int8 layers run on [tokens, hidden] rows, attention on [batch, seq, hidden]. Everything else (embeddings,
 *   softmax, LayerNorm, GELU) stays fp32. A few outlier channels (BERT has them: up to 14× the median channel's
 *   range) would set the step for all; so each input channel above the median range is first divided by
 *   s = √(range / median range) and its weight row multiplied by s (SmoothQuant, Xiao et al. 2023, with the median
 *   as the reference), the ranges measured once by calibration.ts.
 */
import { type EncodedGraph, type ExternalData, GraphBuilder } from '../onnx/graph-builder.js';
import type { Fp32Tensor } from './safetensors.js';

export interface BertConfig {
  hidden_size: number;
  num_attention_heads: number;
  num_hidden_layers: number;
  intermediate_size: number;
  layer_norm_eps: number;
  max_position_embeddings: number;
}

export type BertPrecision = 'fp32' | 'int8';

/**
 * How int8 weights are stored. `signed`: s8, for CPUs whose u8×s8 product does not saturate (x86 with VNNI,
 * arm64). `unsigned`: the same values plus 128, zero point 128 — onnxruntime then takes its u8×u8 path, which
 * widens to 16 bits; its x86 u8×s8 path without VNNI adds pairs of products in saturating 16-bit lanes
 * (VPMADDUBSW) and would clip. Both give the same integers, so the same vectors.
 */
export type Int8Storage = 'signed' | 'unsigned';

/** Per-input-channel max |value| of each dense layer's input, keyed `<layer>.qkv`, `.out`, `.ffn1`, `.ffn2`. */
export type ActivationRanges = Map<string, Float32Array>;

/** The graph output carrying a dense layer's input when `probes` is set. */
export const probeOutput = (key: string): string => `range.${key}`;

export interface BertGraphOptions {
  precision?: BertPrecision;
  int8Storage?: Int8Storage;
  /** For int8 (required): the calibrated activation ranges, for smoothing and the QKV input's scale. */
  activationRanges?: ActivationRanges;
  /** For calibration: an fp32 graph that also outputs every dense layer's input (`probeOutput(key)`). */
  probes?: boolean;
  /** Put large tensors in an external-data file (memory-mapped by onnxruntime) instead of the protobuf. */
  external?: ExternalData;
}

const MS = 'com.microsoft';
/** How far below zero a GELU's output goes (its least value, at x ≈ −0.75, is −0.16997). */
const GELU_DEPTH = 0.17;
const INT32 = 6;
const FLOAT = 1;

/** Symmetric per-column int8 of a [K, N] matrix: the integers and one scale per column. */
export function quantizeColumns(m: Float32Array, K: number, N: number): { q: Int8Array; scale: Float32Array } {
  const scale = new Float32Array(N);
  for (let k = 0; k < K; k++) for (let n = 0; n < N; n++) scale[n] = Math.max(scale[n]!, Math.abs(m[k * N + n]!));
  for (let n = 0; n < N; n++) scale[n] = scale[n]! / 127 || 1;
  const q = new Int8Array(K * N);
  for (let k = 0; k < K; k++) for (let n = 0; n < N; n++) q[k * N + n] = Math.round(m[k * N + n]! / scale[n]!);
  return { q, scale };
}

/**
 * SmoothQuant factors from a layer's input ranges: s = max(1, √(range / median range)) per channel, so only the
 * channels wider than the median are narrowed, by at most the square root of their excess.
 */
export function smoothingFactors(range: Float32Array): Float32Array {
  const median = [...range].sort((a, b) => a - b)[range.length >> 1]!;
  return Float32Array.from(range, (r) => (median > 0 ? Math.max(1, Math.sqrt(r / median)) : 1));
}

export function buildBertGraph(weights: Map<string, Fp32Tensor>, config: BertConfig, options: BertGraphOptions = {}): EncodedGraph {
  const H = config.hidden_size;
  const I = config.intermediate_size;
  const heads = config.num_attention_heads;
  if (H % heads !== 0) throw new Error('bert: hidden_size must be divisible by num_attention_heads');
  const int8 = options.precision === 'int8';
  if (int8 && !options.activationRanges) throw new Error('bert: the int8 graph needs calibrated activation ranges');
  const unsigned = options.int8Storage === 'unsigned';
  const eps = { float: config.layer_norm_eps };
  const g = new GraphBuilder('bert');

  const w = (name: string): Fp32Tensor => {
    const t = weights.get(name);
    if (!t) throw new Error(`bert: weight ${name} missing from safetensors`);
    return t;
  };
  const vec = (name: string): string => g.floats(name, [w(name).data.length], w(name).data);
  /** A Linear weight [out, in] as the [in, out] matrix MatMul expects. */
  const transposed = (prefix: string): Float32Array => {
    const { shape, data } = w(`${prefix}.weight`);
    const [out, inp] = shape as [number, number];
    const t = new Float32Array(inp * out);
    for (let o = 0; o < out; o++) for (let i = 0; i < inp; i++) t[i * out + o] = data[o * inp + i]!;
    return t;
  };
  /** An int8 [K, N] weight as stored (see Int8Storage), its per-column scales, and the zero point input ('' = none). */
  const int8Weight = (name: string, m: Float32Array, K: number, N: number): [string, string, string] => {
    const { q, scale } = quantizeColumns(m, K, N);
    const scales = g.floats(`${name}_scale`, [N], scale);
    if (!unsigned) return [g.tensor(`${name}_q`, 'int8', [K, N], q), scales, ''];
    const u = Uint8Array.from(q, (v) => v + 128);
    return [g.tensor(`${name}_q`, 'uint8', [K, N], u), scales, g.tensor(`${name}_zero`, 'uint8', [N], new Uint8Array(N).fill(128))];
  };
  /**
   * The int8 path's input: `x` divided per channel by the smoothing factors of `key`, whose weight rows ([K, N] `m`,
   * changed in place) are multiplied by them instead; with the calibrated max |value| of the smoothed input.
   */
  const smoothed = (x: string, key: string, m: Float32Array, K: number, N: number): { x: string; max: number } => {
    const range = options.activationRanges?.get(key);
    if (range?.length !== K) throw new Error(`bert: activation range ${key} has ${range?.length ?? 0} channels, expected ${K}`);
    const s = smoothingFactors(range);
    for (let k = 0; k < K; k++) for (let n = 0; n < N; n++) m[k * N + n] = m[k * N + n]! * s[k]!;
    return { x: g.op('Mul', [x, g.floats(`${key}.smooth`, [K], Float32Array.from(s, (v) => 1 / v))]), max: Math.max(...range.map((r, k) => r / s[k]!)) };
  };
  const probe = (x: string, key: string, dim: number): void => {
    if (!options.probes) return;
    g.op('Identity', [x], {}, probeOutput(key));
    g.output(probeOutput(key), 'float32', ['batch', 'seq', dim]);
  };
  /** A constant made once per name (several layers share them). */
  const constants = new Map<string, string>();
  const constant = (name: string, make: () => string): string => {
    let c = constants.get(name);
    if (!c) constants.set(name, (c = make()));
    return c;
  };
  const u8 = (value: number): string => constant(`u8_${value}`, () => g.tensor(`u8_${value}`, 'uint8', [], new Uint8Array([value])));
  /** Per row (token) zero points, all `zero`, made once for the graph from the first row scales' shape. */
  const rowZeros = (zero: number, perRow: string): string => constant(`row_zeros_${zero}`, () => g.op('Expand', [u8(zero), g.op('Shape', [perRow])]));
  /**
   * `x` [tokens, K] quantised a row (token) at a time, so a token's integers and scale depend on its own values only,
   * never on its batch mates or their padding. Symmetric: s = max|x_row| / 127, q = round(x / s) + 128. A GELU's
   * output (≥ −0.17) gets most of the 256 steps for its positive side instead: zero point 32,
   * s = max(max x_row / 223, 0.17 / 32): against symmetric, cosine to fp32 over the fixed test sentences min 0.9917 →
   * 0.9933, mean 0.9972 → 0.9975.
   * Returns q [tokens, K] (u8), s [tokens, 1] and the zero point.
   */
  const rowQuantized = (x: string, gelu = false): { q: string; scale: string; zero: number } => {
    const zero = gelu ? 32 : 128;
    const reduce = { axes: { ints: [1] }, keepdims: { int: 1 } };
    const max = g.op('ReduceMax', [gelu ? x : g.op('Abs', [x])], reduce);
    const step = constant(`step_${zero}`, () => g.scalar(`step_${zero}`, 1 / (255 - zero)));
    const least = constant(`least_${zero}`, () => g.scalar(`least_${zero}`, gelu ? GELU_DEPTH / zero : 1e-20));
    const scale = g.op('Max', [g.op('Mul', [max, step]), least]);
    const perRow = g.op('Reshape', [scale, constant('flat', () => g.ints('flat', [-1]))]);
    return { q: g.op('QuantizeLinear', [x, perRow, rowZeros(zero, perRow)], { axis: { int: 0 } }), scale, zero };
  };
  /** A row-quantised input times an int8 [K, N] weight, in float: (q − zero)·W × the weight's column scales × s. */
  const int8Product = ({ q, scale, zero }: { q: string; scale: string; zero: number }, name: string, m: Float32Array, K: number, N: number): string => {
    const [wq, wScale, wZero] = int8Weight(name, m, K, N);
    const one = constant('one', () => g.scalar('one', 1));
    return g.op('Mul', [g.domainOp(MS, 'MatMulIntegerToFloat', [q, wq, one, wScale, u8(zero), ...(wZero ? [wZero] : [])]), scale]);
  };
  const matmul = (x: string, prefix: string, key: string, inp: number, out: number): string => {
    probe(x, key, inp);
    const m = transposed(prefix);
    if (!int8) return g.op('MatMul', [x, g.floats(`${prefix}.weight_t`, [inp, out], m)]);
    return int8Product(rowQuantized(smoothed(x, key, m, inp, out).x, key.endsWith('.ffn2')), `${prefix}.weight`, m, inp, out);
  };

  const ids = g.input('input_ids', 'int64', ['batch', 'seq']);
  const mask = g.input('attention_mask', 'int64', ['batch', 'seq']);

  // Embeddings: word + (position + token type 0), then LayerNorm.
  const pos = w('embeddings.position_embeddings.weight');
  const type0 = w('embeddings.token_type_embeddings.weight').data.subarray(0, H);
  const posTable = g.floats(
    'embeddings.position_plus_type0',
    pos.shape,
    Float32Array.from(pos.data, (v, i) => v + type0[i % H]!),
  );
  const word = w('embeddings.word_embeddings.weight');
  const gather = { axis: { int: 0 } };
  const wordEmb = word.half
    ? g.op('Cast', [g.op('Gather', [g.tensor('embeddings.word_embeddings.weight', 'float16', word.shape, word.half), ids], gather)], { to: { int: FLOAT } })
    : g.op('Gather', [g.floats('embeddings.word_embeddings.weight', word.shape, word.data), ids], gather);
  const seqLen = g.op('Shape', [ids], { start: { int: 1 }, end: { int: 2 } });
  const posEmb = g.op('Slice', [posTable, g.ints('zero_1d', [0]), seqLen, g.ints('axis_0', [0])]);
  let x = g.op('LayerNormalization', [g.op('Add', [wordEmb, posEmb]), vec('embeddings.LayerNorm.weight'), vec('embeddings.LayerNorm.bias')], {
    axis: { int: -1 },
    epsilon: eps,
  });

  // Attention's 2-D mask_index: int32 [batch, seq], 1 = attend, 0 = padding.
  const maskIndex = g.op('Cast', [mask], { to: { int: INT32 } });
  /** The shape [batch, seq, n], and [tokens, n]: int8 layers run on [tokens, hidden] rows, attention on [batch, seq, hidden]. */
  const shapeOf = (n: number): string => constant(`shape_${n}`, () => g.op('Concat', [g.op('Shape', [ids]), g.ints(`dim_${n}`, [n])], { axis: { int: 0 } }));
  const tokensOf = (n: number): string => constant(`tokens_${n}`, () => g.ints(`tokens_${n}`, [-1, n]));
  if (int8) x = g.op('Reshape', [x, tokensOf(H)]);

  for (let l = 0; l < config.num_hidden_layers; l++) {
    const p = `encoder.layer.${l}`;
    // Attention wants Q, K and V side by side: weights [H, 3H], bias [3H].
    const parts = ['query', 'key', 'value'].map((n) => transposed(`${p}.attention.self.${n}`));
    const qkv = new Float32Array(H * 3 * H);
    for (let i = 0; i < H; i++) parts.forEach((part, k) => qkv.set(part.subarray(i * H, (i + 1) * H), i * 3 * H + k * H));
    const qkvBias = new Float32Array(3 * H);
    ['query', 'key', 'value'].forEach((n, k) => qkvBias.set(w(`${p}.attention.self.${n}.bias`).data, k * H));
    const bias = g.floats(`${p}.attention.qkv_bias`, [3 * H], qkvBias);
    let attn: string;
    probe(x, `${l}.qkv`, H);
    if (int8) {
      // QAttention takes one input scale per tensor: a constant one here, from the calibrated range, so the
      // projection does not depend on batch mates either (values past the range saturate). Per row, the projection
      // would leave QAttention for fp32 MultiHeadAttention, whose transposes of Q, K and V cost more than the
      // projection itself (onnxruntime's profiler: 108–113 ms against QAttention's 93–95 a pass of 8 × 256 tokens).
      const input = smoothed(x, `${l}.qkv`, qkv, H, 3 * H);
      const xScale = g.scalar(`${p}.attention.input_scale`, input.max / 127);
      const xq = g.op('Reshape', [g.op('QuantizeLinear', [input.x, xScale, u8(128)]), shapeOf(H)]);
      const [q, scale, zero] = int8Weight(`${p}.attention.qkv`, qkv, H, 3 * H);
      const inputs = [xq, q, bias, xScale, scale, maskIndex, u8(128), ...(zero ? [zero] : [])];
      attn = g.op('Reshape', [g.domainOp(MS, 'QAttention', inputs, { num_heads: { int: heads } }), tokensOf(H)]);
    } else {
      attn = g.domainOp(MS, 'Attention', [x, g.floats(`${p}.attention.qkv_t`, [H, 3 * H], qkv), bias, maskIndex], { num_heads: { int: heads } });
    }
    const projected = matmul(attn, `${p}.attention.output.dense`, `${l}.out`, H, H);
    x = g.domainOp(
      MS,
      'SkipLayerNormalization',
      [projected, x, vec(`${p}.attention.output.LayerNorm.weight`), vec(`${p}.attention.output.LayerNorm.bias`), vec(`${p}.attention.output.dense.bias`)],
      { epsilon: eps },
    );
    const hidden = g.domainOp(MS, 'BiasGelu', [matmul(x, `${p}.intermediate.dense`, `${l}.ffn1`, H, I), vec(`${p}.intermediate.dense.bias`)]);
    const out = matmul(hidden, `${p}.output.dense`, `${l}.ffn2`, I, H);
    x = g.domainOp(
      MS,
      'SkipLayerNormalization',
      [out, x, vec(`${p}.output.LayerNorm.weight`), vec(`${p}.output.LayerNorm.bias`), vec(`${p}.output.dense.bias`)],
      { epsilon: eps },
    );
  }

  if (int8) x = g.op('Reshape', [x, shapeOf(H)]);
  // Mean over the unmasked tokens, then x / max(‖x‖, 1e-12), as sentence-transformers' Pooling + Normalize do.
  // (At opset 17 ReduceSum takes its axes as an input, ReduceL2 still as an attribute.)
  const maskF = g.op('Cast', [mask], { to: { int: FLOAT } });
  const axis1 = g.ints('axis_1', [1]);
  const summed = g.op('ReduceSum', [g.op('Mul', [x, g.op('Unsqueeze', [maskF, g.ints('axis_2', [2])])]), axis1], { keepdims: { int: 0 } });
  const tokens = g.op('Max', [g.op('ReduceSum', [maskF, axis1], { keepdims: { int: 1 } }), g.scalar('min_tokens', 1e-9)]);
  const mean = g.op('Div', [summed, tokens]);
  const norm = g.op('Max', [g.op('ReduceL2', [mean], { axes: { ints: [1] }, keepdims: { int: 1 } }), g.scalar('min_norm', 1e-12)]);
  g.op('Div', [mean, norm], {}, 'sentence_embedding');
  g.output('sentence_embedding', 'float32', ['batch', H]);
  // The last hidden states as well, second (a run fetches the first outputs only: onnx/session.ts): a passage's
  // answer units are pooled from them (minilm-embedder.ts, late chunking), so they cost no pass of their own.
  g.op('Identity', [x], {}, 'token_embeddings');
  g.output('token_embeddings', 'float32', ['batch', 'seq', H]);
  return g.encodeWith({ opset: 17, ...(options.external ? { external: options.external } : {}) });
}
