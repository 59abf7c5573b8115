/**
 * What is wrong with a model option's value, or null: the daemon's configuration checks `--embedder`, `--reranker`,
 * `--ollama-host` and `--openai-base-url` with these before it opens anything (a bad one is a usage error, exit 2),
 * and the registry checks them again as it builds. Plain functions with no provider behind them, so reading the
 * configuration loads no model code.
 */
import { shownUrl } from '../core/shown-url.js';
import type { BertPrecision } from './builtin/bert-graph.js';

const EMBEDDER_FORMS = 'builtin, builtin:fp32, builtin:int8, ollama:<model> or openai:<model>';
const RERANKER_FORMS = 'builtin, ollama:<model>, http:<url>, onnx:<dir> or none';
/** The kinds a spec without a problem has. */
export type EmbedderKind = 'builtin' | 'ollama' | 'openai';
export type RerankerKind = 'builtin' | 'none' | 'ollama' | 'http' | 'onnx';

const BUILTIN_PRECISIONS: readonly BertPrecision[] = ['fp32', 'int8'];

/** Splits `kind:rest` at the first colon; `rest` is '' when there is none. */
export function splitSpec(spec: string): [string, string] {
  const at = spec.indexOf(':');
  return at < 0 ? [spec, ''] : [spec.slice(0, at), spec.slice(at + 1)];
}

/** Why `value` is no http(s) URL a request may go to; `credentials` says why user:password@ is refused, for its option. */
export function httpUrlProblem(value: string, credentials = 'must not carry credentials'): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `must be an http(s) URL (got ${shownUrl(value)})`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be an http(s) URL (got ${shownUrl(value)})`;
  if (url.username || url.password) return credentials;
  if (url.port === '0') return `must name a port from 1 to 65535 (got ${shownUrl(value)})`;
  return null;
}

/** The model named after `#` in an `http:` reranker URL, percent-decoded; null when it is not valid percent-encoding. */
export function fragmentModel(url: URL): string | null {
  try {
    return decodeURIComponent(url.hash.slice(1));
  } catch {
    return null;
  }
}

export function embedderSpecProblem(raw: string): string | null {
  const spec = raw.trim();
  const [kind, rest] = splitSpec(spec);
  switch (kind) {
    case 'builtin':
      return !rest || BUILTIN_PRECISIONS.includes(rest as BertPrecision) ? null : `must be ${EMBEDDER_FORMS} (got ${shownUrl(spec)}); builtin takes a precision, not a model name`;
    case 'ollama':
      return rest ? null : 'needs a model name: ollama:<model>, e.g. ollama:nomic-embed-text';
    case 'openai':
      return rest ? null : 'needs a model name: openai:<model>, e.g. openai:text-embedding-3-small';
    default:
      return `must be ${EMBEDDER_FORMS} (got ${shownUrl(spec)})`;
  }
}

/** `builtin` passes: the composition root registers it (src/search owns it). */
export function rerankerSpecProblem(raw: string): string | null {
  const spec = raw.trim();
  const [kind, rest] = splitSpec(spec);
  switch (kind) {
    case 'builtin':
      return null;
    case 'none':
      return rest ? `must be ${RERANKER_FORMS} (got ${shownUrl(spec)})` : null;
    case 'ollama':
      return rest ? null : 'needs a model name: ollama:<model>, e.g. ollama:qwen2.5:1.5b';
    case 'http': {
      const problem = httpUrlProblem(rest, 'must not carry credentials: give the key with --reranker-api-key (DOCSEARCH_RERANKER_API_KEY)');
      if (problem) return problem;
      const url = new URL(rest);
      return fragmentModel(url) === null ? `has a model name after # that is not valid percent-encoding (got ${JSON.stringify(url.hash.slice(1))}); write % as %25` : null;
    }
    case 'onnx':
      return rest ? null : 'needs a folder: onnx:<dir> (with model.onnx and tokenizer.json)';
    default:
      return `must be ${RERANKER_FORMS} (got ${shownUrl(spec)})`;
  }
}
