/**
 * Builds an ONNX graph of a BERT encoder (all-MiniLM-L6-v2) from safetensors weights.
 *
 * Inputs `input_ids` and `attention_mask` (int64 [batch, seq]); output `last_hidden_state`
 * (float [batch, seq, hidden]). Pooling stays in code so the per-token states remain available.
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
 */
import { GraphBuilder } from '../onnx/graph-builder.js';
import type { Fp32Tensor } from './safetensors.js';

export interface BertConfig {
  hidden_size: number;
  num_attention_heads: number;
  num_hidden_layers: number;
  intermediate_size: number;
  layer_norm_eps: number;
  max_position_embeddings: number;
}

const MS = 'com.microsoft';
const INT32 = 6;

export function buildBertGraph(weights: Map<string, Fp32Tensor>, config: BertConfig): Uint8Array {
  const H = config.hidden_size;
  const I = config.intermediate_size;
  const heads = config.num_attention_heads;
  if (H % heads !== 0) throw new Error('bert: hidden_size must be divisible by num_attention_heads');
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
  const matmul = (x: string, prefix: string, inp: number, out: number): string =>
    g.op('MatMul', [x, g.floats(`${prefix}.weight_t`, [inp, out], transposed(prefix))]);

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
  const wordEmb = g.op('Gather', [g.floats('embeddings.word_embeddings.weight', word.shape, word.data), ids], {
    axis: { int: 0 },
  });
  const seqLen = g.op('Shape', [ids], { start: { int: 1 }, end: { int: 2 } });
  const posEmb = g.op('Slice', [posTable, g.ints('zero_1d', [0]), seqLen, g.ints('axis_0', [0])]);
  let x = g.op('LayerNormalization', [g.op('Add', [wordEmb, posEmb]), vec('embeddings.LayerNorm.weight'), vec('embeddings.LayerNorm.bias')], {
    axis: { int: -1 },
    epsilon: eps,
  });

  // Attention's 2-D mask_index: int32 [batch, seq], 1 = attend, 0 = padding.
  const maskIndex = g.op('Cast', [mask], { to: { int: INT32 } });

  for (let l = 0; l < config.num_hidden_layers; l++) {
    const p = `encoder.layer.${l}`;
    // Attention wants Q, K and V side by side: weights [H, 3H], bias [3H].
    const parts = ['query', 'key', 'value'].map((n) => transposed(`${p}.attention.self.${n}`));
    const qkv = new Float32Array(H * 3 * H);
    for (let i = 0; i < H; i++) parts.forEach((part, k) => qkv.set(part.subarray(i * H, (i + 1) * H), i * 3 * H + k * H));
    const qkvBias = new Float32Array(3 * H);
    ['query', 'key', 'value'].forEach((n, k) => qkvBias.set(w(`${p}.attention.self.${n}.bias`).data, k * H));
    const attn = g.domainOp(
      MS,
      'Attention',
      [x, g.floats(`${p}.attention.qkv_t`, [H, 3 * H], qkv), g.floats(`${p}.attention.qkv_bias`, [3 * H], qkvBias), maskIndex],
      { num_heads: { int: heads } },
    );
    const projected = matmul(attn, `${p}.attention.output.dense`, H, H);
    x = g.domainOp(
      MS,
      'SkipLayerNormalization',
      [projected, x, vec(`${p}.attention.output.LayerNorm.weight`), vec(`${p}.attention.output.LayerNorm.bias`), vec(`${p}.attention.output.dense.bias`)],
      { epsilon: eps },
    );
    const hidden = g.domainOp(MS, 'BiasGelu', [matmul(x, `${p}.intermediate.dense`, H, I), vec(`${p}.intermediate.dense.bias`)]);
    const out = matmul(hidden, `${p}.output.dense`, I, H);
    x = g.domainOp(
      MS,
      'SkipLayerNormalization',
      [out, x, vec(`${p}.output.LayerNorm.weight`), vec(`${p}.output.LayerNorm.bias`), vec(`${p}.output.dense.bias`)],
      { epsilon: eps },
    );
  }

  g.op('Identity', [x], {}, 'last_hidden_state');
  g.output('last_hidden_state', 'float32', ['batch', 'seq', H]);
  return g.encode(17);
}
