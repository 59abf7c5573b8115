/**
 * A small typed layer over the ONNX protobuf schema (`onnx-proto`, protobufjs-generated), so graphs
 * are encoded by a real protobuf library rather than a hand-rolled writer. It only knows what our
 * graphs need: float/int64 initializers, single- or multi-output nodes, and int/ints/float attributes.
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

export type ElemType = 'float32' | 'int64' | 'int32';

const DATA_TYPE: Record<ElemType, number> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  int64: onnx.TensorProto.DataType.INT64,
  int32: onnx.TensorProto.DataType.INT32,
};

export type Attr = { int: number } | { ints: number[] } | { float: number };

export class GraphBuilder {
  private readonly nodes: InstanceType<typeof onnx.NodeProto>[] = [];
  private readonly initializers: InstanceType<typeof onnx.TensorProto>[] = [];
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
    this.initializers.push(
      onnx.TensorProto.create({
        name,
        dims,
        dataType: DATA_TYPE.float32,
        rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      }),
    );
    return name;
  }

  ints(name: string, values: number[]): string {
    const data = BigInt64Array.from(values, (v) => BigInt(v));
    this.initializers.push(
      onnx.TensorProto.create({
        name,
        dims: [values.length],
        dataType: DATA_TYPE.int64,
        rawData: new Uint8Array(data.buffer),
      }),
    );
    return name;
  }

  /** A scalar float constant (rank 0), for element-wise arithmetic. */
  scalar(name: string, value: number): string {
    this.initializers.push(
      onnx.TensorProto.create({
        name,
        dims: [],
        dataType: DATA_TYPE.float32,
        rawData: new Uint8Array(new Float32Array([value]).buffer),
      }),
    );
    return name;
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
    const out = output ?? this.fresh(opType);
    if (domain) this.domains.add(domain);
    this.nodes.push(
      onnx.NodeProto.create({
        domain,
        opType,
        input: inputs,
        output: [out],
        name: this.fresh(`n_${opType}`),
        attribute: Object.entries(attrs).map(([name, a]) => attribute(name, a)),
      }),
    );
    return out;
  }

  /** Serialises the model (IR 8, default-domain opset `opset`, version 1 of any other domain used). */
  encode(opset = 17): Uint8Array {
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
        initializer: this.initializers,
        input: this.inputs,
        output: this.outputs,
      }),
    });
    return onnx.ModelProto.encode(model).finish();
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
