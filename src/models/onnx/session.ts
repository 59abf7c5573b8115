/**
 * The only module that imports onnxruntime-node, and it does so inside a worker thread.
 *
 * Why a worker: onnxruntime-node 1.22's `InferenceSession.run` is a synchronous native call merely
 * deferred with setImmediate (see its dist/backend.js), and `loadModel` is synchronous too, so running
 * them on the main thread would stall the daemon's event loop for the whole forward pass. Each
 * OnnxSession owns one worker that owns one native session; requests are answered in order.
 *
 * This same file is the worker's entry point (selected by `workerData.role`), which keeps the
 * onnxruntime import in one place.
 */
import { createRequire } from 'node:module';
import { availableParallelism, setPriority } from 'node:os';
import { isMainThread, parentPort, workerData, type TransferListItem, type Worker } from 'node:worker_threads';
import type * as Ort from 'onnxruntime-node';
import { startModuleWorker } from '../../core/module-worker.js';

const ROLE = 'docsearch-onnx-session';
/** Ten nice steps: a busy thread at 0 gets about nine times the CPU of one at 10 when they compete. */
const BACKGROUND_NICE = 10;

export type TensorType = 'int64' | 'float32';

export interface TensorData {
  type: TensorType;
  data: BigInt64Array | Float32Array;
  dims: number[];
}

export interface OnnxSessionOptions {
  /** Threads for one operator; default: every core, since one session runs at a time per model. */
  intraOpThreads?: number;
  /**
   * Let onnxruntime's pool threads busy-wait between parallel sections. Off by default: on a small
   * server the spinning threads steal the cores the daemon's own thread and the parsers need, and on a
   * loaded 2-core machine it measured slower (4.0 vs 5.3 passages/s).
   */
  spinWait?: boolean;
  /**
   * For small inputs (search queries): no memory arena and no pre-packed weight copies, which more than halves
   * what a session holds (docs/models.md) at a cost that only large batches would notice.
   */
  lean?: boolean;
  /**
   * Run the session's threads at a lower CPU priority (Linux nice 10), for background work such as ingestion:
   * when a search needs the cores at the same time, the kernel gives them to the search first.
   */
  background?: boolean;
}

interface WorkerInit {
  role: typeof ROLE;
  modelPath: string;
  intraOpThreads: number;
  spinWait: boolean;
  lean: boolean;
  background: boolean;
}

type Request = { id: number; feeds: Record<string, TensorData>; fetches: string[] | undefined };
type Reply =
  | { id: number; outputs: Record<string, TensorData> }
  | { id: number; error: string };
type Ready = { ready: true; inputNames: string[]; outputNames: string[] } | { ready: false; error: string };

let pinned = false;

/** How long close() lets a run in flight finish before ending its worker anyway (a batch takes seconds). */
const CLOSE_WAIT_MS = 30_000;

/**
 * Loads onnxruntime's native addon on the main thread once, and keeps it. Node unloads an addon when the last
 * thread that loaded it exits, and onnxruntime's cannot register itself a second time in the same process
 * ("Module did not self-register"): without this, once every session had closed (the passage session is released
 * when idle) no session could open again. Costs no threads: onnxruntime starts nothing until a session exists.
 */
function pinAddon(): void {
  if (pinned) return;
  createRequire(import.meta.url)('onnxruntime-node');
  pinned = true;
}

export class OnnxSession {
  private readonly pending = new Map<number, { resolve: (o: Record<string, TensorData>) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private closed = false;
  private failure: Error | undefined;

  private constructor(
    private readonly worker: Worker,
    readonly inputNames: readonly string[],
    readonly outputNames: readonly string[],
  ) {
    // An idle session does not keep the process alive; one with work in flight does.
    worker.unref();
    worker.on('message', (msg: Reply) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (this.pending.size === 0) worker.unref();
      if ('error' in msg) p.reject(new Error(`onnxruntime: ${msg.error}`));
      else p.resolve(msg.outputs);
    });
    const fail = (err: Error): void => {
      this.failure ??= err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (!this.closed) fail(new Error(`onnxruntime worker exited with code ${code}`));
    });
  }

  /** Loads `modelPath` in a new worker thread; resolves once the session is ready. */
  static async open(modelPath: string, options: OnnxSessionOptions = {}): Promise<OnnxSession> {
    const init: WorkerInit = {
      role: ROLE,
      modelPath,
      intraOpThreads: options.intraOpThreads ?? availableParallelism(),
      spinWait: options.spinWait ?? false,
      lean: options.lean ?? false,
      background: options.background ?? false,
    };
    pinAddon();
    const worker = startModuleWorker(import.meta.url, { workerData: init });
    // Only our own listeners are removed afterwards: Worker keeps internal ones (removeAllListeners()
    // would stop its message port).
    let onMessage!: (r: Ready) => void;
    let onError!: (e: Error) => void;
    let onExit!: (code: number) => void;
    const ready = await new Promise<Ready>((resolve, reject) => {
      onMessage = resolve;
      onError = reject;
      onExit = (code) => reject(new Error(`onnxruntime worker exited with code ${code} while loading`));
      worker.once('message', onMessage).once('error', onError).once('exit', onExit);
    })
      .catch(async (err: unknown) => {
        await worker.terminate();
        throw err;
      })
      .finally(() => worker.off('message', onMessage).off('error', onError).off('exit', onExit));
    if (!ready.ready) {
      await worker.terminate();
      throw new Error(`onnxruntime could not load ${modelPath}: ${ready.error}`);
    }
    return new OnnxSession(worker, ready.inputNames, ready.outputNames);
  }

  /** Why the worker stopped unexpectedly, if it did; every later run() fails with it. */
  get error(): Error | undefined {
    return this.failure;
  }

  /**
   * Runs the model. Input buffers are transferred to the worker (the caller must not reuse them);
   * `fetches` limits which outputs come back. It must be the graph's first outputs: onnxruntime-node 1.22 names
   * the results of other subsets after the first outputs (the values are right, the names are not).
   */
  run(feeds: Record<string, TensorData>, fetches?: string[]): Promise<Record<string, TensorData>> {
    if (this.closed) return Promise.reject(new Error('onnx session is closed'));
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    const transfer: TransferListItem[] = Object.values(feeds).map((t) => t.data.buffer as ArrayBuffer);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      const req: Request = { id, feeds, fetches };
      this.worker.postMessage(req, transfer);
    });
  }

  /**
   * Ends the worker once the runs in flight have finished (at most CLOSE_WAIT_MS): a worker terminated during a run
   * aborts the whole process (onnxruntime's finished run calls back into the thread's ended environment:
   * "terminate called after throwing an instance of 'Napi::Error'", SIGABRT). Their callers are told now.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const running = [...this.pending.keys()];
    for (const p of this.pending.values()) p.reject(new Error('onnx session is closed'));
    this.pending.clear();
    if (running.length > 0 && !this.failure) {
      await new Promise<void>((resolve) => {
        const left = new Set(running);
        const timer = setTimeout(done, CLOSE_WAIT_MS);
        const onMessage = (msg: Reply) => {
          left.delete(msg.id);
          if (left.size === 0) done();
        };
        function done(): void {
          clearTimeout(timer);
          worker.off('message', onMessage).off('exit', done);
          resolve();
        }
        const worker = this.worker;
        worker.on('message', onMessage).once('exit', done);
      });
    }
    await this.worker.terminate();
  }
}

async function serveWorker(init: WorkerInit): Promise<void> {
  const port = parentPort!;
  let session: Ort.InferenceSession;
  let ort: typeof Ort;
  // On Linux, nice is per thread: set on this worker's thread before the session exists, it is inherited by the
  // intra-op pool threads onnxruntime starts (elsewhere setPriority(0, …) would change the whole process).
  if (init.background && process.platform === 'linux') setPriority(BACKGROUND_NICE);
  try {
    ort = await import('onnxruntime-node');
    session = await ort.InferenceSession.create(init.modelPath, {
      intraOpNumThreads: init.intraOpThreads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      // Warnings only; onnxruntime's info-level notes about initializers are not actionable here.
      logSeverityLevel: 3,
      enableCpuMemArena: !init.lean,
      extra: { session: { intra_op: { allow_spinning: init.spinWait ? '1' : '0' }, ...(init.lean ? { disable_prepacking: '1' } : {}) } },
    });
  } catch (err) {
    port.postMessage({ ready: false, error: err instanceof Error ? err.message : String(err) } satisfies Ready);
    return;
  }
  port.on('message', (req: Request) => {
    void (async () => {
      try {
        const feeds: Record<string, Ort.Tensor> = {};
        for (const [name, t] of Object.entries(req.feeds)) feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
        const results = req.fetches ? await session.run(feeds, req.fetches) : await session.run(feeds);
        const outputs: Record<string, TensorData> = {};
        const transfer: ArrayBuffer[] = [];
        for (const [name, t] of Object.entries(results)) {
          if (t.type !== 'float32' && t.type !== 'int64') throw new Error(`unsupported output type ${t.type} for ${name}`);
          // Copy out of onnxruntime's buffer so it can be transferred without touching native memory.
          const data = t.type === 'float32' ? new Float32Array(t.data as Float32Array) : new BigInt64Array(t.data as BigInt64Array);
          outputs[name] = { type: t.type, data, dims: [...t.dims] };
          transfer.push(data.buffer as ArrayBuffer);
          t.dispose();
        }
        port.postMessage({ id: req.id, outputs } satisfies Reply, transfer);
      } catch (err) {
        port.postMessage({ id: req.id, error: err instanceof Error ? err.message : String(err) } satisfies Reply);
      }
    })();
  });
  port.postMessage({ ready: true, inputNames: [...session.inputNames], outputNames: [...session.outputNames] } satisfies Ready);
}

if (!isMainThread && (workerData as Partial<WorkerInit> | null)?.role === ROLE) {
  void serveWorker(workerData as WorkerInit);
}
