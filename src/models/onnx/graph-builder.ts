/**
 * A small typed layer over the ONNX protobuf schema (`onnx-proto`, protobufjs-generated), so graphs
 * are encoded by a real protobuf library rather than a hand-rolled writer. It only knows what our
 * graphs need: constant tensors (inline, or in an external-data file beside the model), single- or
 * multi-output nodes, and int/ints/float attributes.
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

export type ElemType = 'float32' | 'float16' | 'int64' | 'int32' | 'int8' | 'uint8';

const DATA_TYPE: Record<ElemType, number> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  float16: onnx.TensorProto.DataType.FLOAT16,
  int64: onnx.TensorProto.DataType.INT64,
  int32: onnx.TensorProto.DataType.INT32,
  int8: onnx.TensorProto.DataType.INT8,
  uint8: onnx.TensorProto.DataType.UINT8,
};

export type Attr = { int: number } | { ints: number[] } | { float: number };

/** A constant tensor's bytes, kept by reference until encode(). */
interface Initializer {
  name: string;
  type: ElemType;
  dims: number[];
  bytes: Uint8Array;
}

/**
 * Tensors of at least `minBytes` go to one external-data file (`location`, relative to the model file) instead of
 * the protobuf: onnxruntime memory-maps that file rather than copying each tensor out of a parsed model, so
 * weights a session uses as they are stay file-backed pages, which sessions of one process share and the kernel
 * can reclaim. Each tensor starts on a `PAGE`-aligned offset.
 */
export interface ExternalData {
  location: string;
  minBytes: number;
}

export interface EncodedGraph {
  model: Uint8Array;
  /** The external-data file's contents, in order (tensor bytes and zero padding); empty without ExternalData. */
  data: Uint8Array[];
}

/** Offsets of external tensors are multiples of this (the largest common page size: 64 KiB on Windows and some arm64 kernels). */
const PAGE = 65_536;

export class GraphBuilder {
  private readonly nodes: InstanceType<typeof onnx.NodeProto>[] = [];
  private readonly initializers: Initializer[] = [];
  private readonly inputs: InstanceType<typeof onnx.ValueInfoProto>[] = [];
  private readonly outputs: InstanceType<typeof onnx.ValueInfoProto>[] = [];
  private readonly domains = new Set<string>();
  private counter = 0;

  constructor(private readonly name: string) {}

  /** A fresh tensor name with a readable prefix. */
  fresh(prefix: string): string {
    return `${prefix}_${this.counter++}`;
  }

  input(name: string, type: ElemType, dims: (number | string)[]): string {
    this.inputs.push(valueInfo(name, type, dims));
    return name;
  }

  output(name: string, type: ElemType, dims: (number | string)[]): void {
    this.outputs.push(valueInfo(name, type, dims));
  }

  /** A constant float tensor. The bytes are referenced, not copied, until encode(). */
  floats(name: string, dims: number[], data: Float32Array): string {
    return this.tensor(name, 'float32', dims, data);
  }

  /** A constant tensor of any element type whose bytes are `data`'s (referenced, not copied, until encode()). */
  tensor(name: string, type: ElemType, dims: number[], data: Float32Array | Uint16Array | Int8Array | Uint8Array | BigInt64Array): string {
    this.initializers.push({ name, type, dims, bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) });
    return name;
  }

  ints(name: string, values: number[]): string {
    return this.tensor(name, 'int64', [values.length], BigInt64Array.from(values, (v) => BigInt(v)));
  }

  /** A scalar float constant (rank 0), for element-wise arithmetic. */
  scalar(name: string, value: number): string {
    return this.tensor(name, 'float32', [], new Float32Array([value]));
  }

  /** Adds a node with one output and returns that output's name. */
  op(opType: string, inputs: string[], attrs: Record<string, Attr> = {}, output?: string): string {
    return this.domainOp('', opType, inputs, attrs, output);
  }

  /**
   * A node from another operator domain, e.g. `com.microsoft` (onnxruntime's contrib kernels). An
   * empty input name means "optional input left out".
   */
  domainOp(domain: string, opType: string, inputs: string[], attrs: Record<string, Attr> = {}, output?: string): string {
    return this.node(domain, opType, inputs, [output ?? this.fresh(opType)], attrs)[0]!;
  }

  /** A node with `outputs` outputs (e.g. DynamicQuantizeLinear's value, scale and zero point); returns their names. */
  multiOp(domain: string, opType: string, inputs: string[], outputs: number, attrs: Record<string, Attr> = {}): string[] {
    return this.node(domain, opType, inputs, Array.from({ length: outputs }, () => this.fresh(opType)), attrs);
  }

  private node(domain: string, opType: string, inputs: string[], outputs: string[], attrs: Record<string, Attr>): string[] {
    if (domain) this.domains.add(domain);
    this.nodes.push(
      onnx.NodeProto.create({
        domain,
        opType,
        input: inputs,
        output: outputs,
        name: this.fresh(`n_${opType}`),
        attribute: Object.entries(attrs).map(([name, a]) => attribute(name, a)),
      }),
    );
    return outputs;
  }

  /** Serialises the model (IR 8, default-domain opset `opset`, version 1 of any other domain used). */
  encode(opset = 17): Uint8Array {
    return this.encodeWith({ opset }).model;
  }

  /** Serialises the model, with large tensors in an external-data file when `external` is given. */
  encodeWith(options: { opset?: number; external?: ExternalData }): EncodedGraph {
    const { opset = 17, external } = options;
    const data: Uint8Array[] = [];
    let offset = 0;
    const initializer = this.initializers.map(({ name, type, dims, bytes }) => {
      const base = { name, dims, dataType: DATA_TYPE[type] };
      if (!external || bytes.byteLength < external.minBytes) return onnx.TensorProto.create({ ...base, rawData: bytes });
      const pad = (PAGE - (offset % PAGE)) % PAGE;
      if (pad) data.push(new Uint8Array(pad));
      offset += pad;
      data.push(bytes);
      const entry = (key: string, value: string) => onnx.StringStringEntryProto.create({ key, value });
      const tensor = onnx.TensorProto.create({
        ...base,
        dataLocation: onnx.TensorProto.DataLocation.EXTERNAL,
        externalData: [entry('location', external.location), entry('offset', String(offset)), entry('length', String(bytes.byteLength))],
      });
      offset += bytes.byteLength;
      return tensor;
    });
    const model = onnx.ModelProto.create({
      irVersion: 8,
      producerName: 'docsearch',
      opsetImport: [
        onnx.OperatorSetIdProto.create({ domain: '', version: opset }),
        ...[...this.domains].map((domain) => onnx.OperatorSetIdProto.create({ domain, version: 1 })),
      ],
      graph: onnx.GraphProto.create({
        name: this.name,
        node: this.nodes,
        initializer,
        input: this.inputs,
        output: this.outputs,
      }),
    });
    return { model: onnx.ModelProto.encode(model).finish(), data };
  }
}

function valueInfo(name: string, type: ElemType, dims: (number | string)[]) {
  return onnx.ValueInfoProto.create({
    name,
    type: onnx.TypeProto.create({
      tensorType: onnx.TypeProto.Tensor.create({
        elemType: DATA_TYPE[type],
        shape: onnx.TensorShapeProto.create({
          dim: dims.map((d) =>
            typeof d === 'number'
              ? onnx.TensorShapeProto.Dimension.create({ dimValue: d })
              : onnx.TensorShapeProto.Dimension.create({ dimParam: d }),
          ),
        }),
      }),
    }),
  });
}

function attribute(name: string, a: Attr) {
  const T = onnx.AttributeProto.AttributeType;
  if ('int' in a) return onnx.AttributeProto.create({ name, type: T.INT, i: a.int });
  if ('ints' in a) return onnx.AttributeProto.create({ name, type: T.INTS, ints: a.ints });
  return onnx.AttributeProto.create({ name, type: T.FLOAT, f: a.float });
}
