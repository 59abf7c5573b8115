/**
 * Builds the configured embedder and reranker from a plain options object (the daemon's flags map onto
 * it 1:1). Strings are checked here, once, and a bad one fails with an `invalid_request` AppError that
 * names the option and the accepted forms.
 *
 *   embedder: builtin[:fp32|:int8] | ollama:<model> | openai:<model>
 *   reranker: builtin | ollama:<model> | http:<url>[#<model>] | onnx:<dir> | none
 *
 * Rerankers that live in other capabilities (the `builtin` one is in src/search and needs stores this
 * folder must not import) are passed in as `extraRerankers` factories by the composition root.
 */
import { AppError } from '../core/errors.js';
import type { Yielder } from '../core/foreground.js';
import type { BertPrecision } from './builtin/bert-graph.js';
import { BuiltinEmbedder, DEFAULT_BUILTIN_PRECISION } from './builtin/minilm-embedder.js';
import type { Embedder } from './embedder.js';
import { HttpReranker } from './http-reranker.js';
import { OllamaEmbedder } from './ollama-embedder.js';
import { OllamaReranker } from './ollama-reranker.js';
import type { ModelLane } from './builtin/minilm-embedder.js';
import { OnnxReranker } from './onnx-reranker.js';
import { OpenAIEmbedder } from './openai-embedder.js';
import type { Reranker } from './reranker.js';
import { type EmbedderKind, embedderSpecProblem, fragmentModel, httpUrlProblem, type RerankerKind, rerankerSpecProblem, splitSpec } from './spec.js';

export interface ModelConfig {
  /** `builtin` | `builtin:fp32` | `builtin:int8` | `ollama:<model>` | `openai:<model>` */
  embedder: string;
  /** `builtin` | `ollama:<model>` | `http:<url>[#<model>]` | `onnx:<dir>` | `none` */
  reranker: string;
  /** Where the built-in model's ONNX graph is cached. */
  modelCacheDir: string;
  /** Ollama server for `ollama:` embedders and rerankers, e.g. http://127.0.0.1:11434; a path (a reverse proxy's prefix) is kept. */
  ollamaHost: string;
  /** OpenAI-compatible server for `openai:` embedders, e.g. https://api.openai.com */
  openaiBaseUrl: string;
  openaiApiKey?: string;
  /** Bearer key for `http:` rerankers. */
  rerankerApiKey?: string;
  /** Per-request timeout for remote providers. */
  timeoutMs?: number;
  /** Extra attempts for transient remote failures (default 2 for embedders, 1 for rerankers). */
  retries?: number;
  /** First retry delay, doubling after each attempt. */
  retryBaseDelayMs?: number;
  /** Test seam: the fetch remote providers use. */
  fetch?: typeof fetch;
  /** Lets the built-in model's passage batches give way to searches in flight. */
  background?: Yielder;
  /** Threads of the built-in models' and onnx: rerankers' passage sessions; default: one per core. */
  modelThreads?: number;
  /** Told each forward pass of the built-in model: its lane (queries, or background passages) and texts (the daemon's metrics). */
  onModelRun?: (lane: ModelLane, texts: number) => void;
}

export type RerankerFactory = (cfg: ModelConfig) => Reranker;

export interface RerankerDeps {
  /** Rerankers provided by other capabilities, keyed by the kind in `--reranker` (e.g. `builtin`). */
  extraRerankers?: Record<string, RerankerFactory>;
}

function invalid(option: string, message: string): AppError {
  return new AppError('invalid_request', `"${option}" ${message}`, { details: { option } });
}

function assertHttpUrl(option: string, value: string): URL {
  const problem = httpUrlProblem(value);
  if (problem) throw invalid(option, problem);
  return new URL(value);
}

/** The Ollama server's base URL: its path kept (an Ollama behind a reverse proxy at https://host/ollama/), no trailing slash. */
function ollamaBase(cfg: ModelConfig): string {
  const url = assertHttpUrl('ollamaHost', cfg.ollamaHost);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function assertTimeout(cfg: ModelConfig): void {
  if (cfg.timeoutMs !== undefined && !(Number.isFinite(cfg.timeoutMs) && cfg.timeoutMs > 0)) {
    throw invalid('timeoutMs', `must be a positive number of milliseconds (got ${cfg.timeoutMs})`);
  }
  if (cfg.retries !== undefined && !(Number.isInteger(cfg.retries) && cfg.retries >= 0 && cfg.retries <= 10)) {
    throw invalid('retries', `must be an integer from 0 to 10 (got ${cfg.retries})`);
  }
}

/** Remote-call options shared by providers; only set fields are passed so provider defaults apply. */
function remote(cfg: ModelConfig): { timeoutMs?: number; retries?: number; retryBaseDelayMs?: number; fetch?: typeof fetch } {
  return {
    ...(cfg.timeoutMs !== undefined ? { timeoutMs: cfg.timeoutMs } : {}),
    ...(cfg.retries !== undefined ? { retries: cfg.retries } : {}),
    ...(cfg.retryBaseDelayMs !== undefined ? { retryBaseDelayMs: cfg.retryBaseDelayMs } : {}),
    ...(cfg.fetch ? { fetch: cfg.fetch } : {}),
  };
}

/** The local models' thread count, only when configured (their default is one per core). */
export const threads = (cfg: Pick<ModelConfig, 'modelThreads'>): { intraOpThreads?: number } =>
  cfg.modelThreads !== undefined ? { intraOpThreads: cfg.modelThreads } : {};

export function createEmbedder(cfg: ModelConfig): Embedder {
  assertTimeout(cfg);
  const spec = String(cfg.embedder ?? '').trim();
  const problem = embedderSpecProblem(spec);
  if (problem) throw invalid('embedder', problem);
  const [kind, rest] = splitSpec(spec) as [EmbedderKind, string];
  switch (kind) {
    case 'builtin': {
      const precision = (rest || DEFAULT_BUILTIN_PRECISION) as BertPrecision;
      if (!cfg.modelCacheDir) throw invalid('modelCacheDir', 'is required for the builtin embedder');
      return new BuiltinEmbedder({ modelCacheDir: cfg.modelCacheDir, precision, ...(cfg.background ? { background: cfg.background } : {}), ...(cfg.onModelRun ? { onRun: cfg.onModelRun } : {}), ...threads(cfg) });
    }
    case 'ollama':
      return new OllamaEmbedder({ model: rest, host: ollamaBase(cfg), ...remote(cfg) });
    case 'openai':
      assertHttpUrl('openaiBaseUrl', cfg.openaiBaseUrl);
      return new OpenAIEmbedder({
        model: rest,
        baseUrl: cfg.openaiBaseUrl,
        ...(cfg.openaiApiKey ? { apiKey: cfg.openaiApiKey } : {}),
        ...remote(cfg),
      });
  }
}

/** The configured reranker, or null for `none`. */
export function createReranker(cfg: ModelConfig, deps: RerankerDeps = {}): Reranker | null {
  assertTimeout(cfg);
  const spec = String(cfg.reranker ?? '').trim();
  const [kind, rest] = splitSpec(spec);
  const extra = deps.extraRerankers?.[kind];
  if (extra) return extra(cfg);
  const problem = rerankerSpecProblem(spec);
  if (problem) throw invalid('reranker', problem);
  switch (kind as RerankerKind) {
    case 'none':
      return null;
    case 'builtin':
      // src/search owns it and the composition root registers it through `extraRerankers`.
      throw invalid('reranker', 'is builtin, but no builtin reranker was registered with the model registry');
    case 'ollama':
      return new OllamaReranker({ model: rest, host: ollamaBase(cfg), ...remote(cfg) });
    case 'http': {
      const url = new URL(rest);
      const model = fragmentModel(url);
      url.hash = '';
      return new HttpReranker({
        url: url.href,
        ...(model ? { model } : {}),
        ...(cfg.rerankerApiKey ? { apiKey: cfg.rerankerApiKey } : {}),
        ...remote(cfg),
      });
    }
    case 'onnx':
      return new OnnxReranker({ dir: rest, ...threads(cfg) });
  }
}
