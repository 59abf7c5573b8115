import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { BuiltinEmbedder, DEFAULT_BUILTIN_PRECISION } from '../../src/models/builtin/minilm-embedder.js';
import { HttpReranker } from '../../src/models/http-reranker.js';
import { OllamaEmbedder } from '../../src/models/ollama-embedder.js';
import { OllamaReranker } from '../../src/models/ollama-reranker.js';
import { OnnxReranker } from '../../src/models/onnx-reranker.js';
import { OpenAIEmbedder } from '../../src/models/openai-embedder.js';
import { createEmbedder, createReranker, type ModelConfig } from '../../src/models/registry.js';
import type { Reranker } from '../../src/models/reranker.js';
import { TEST_MODEL_CACHE } from '../helpers/daemon.js';

const base: ModelConfig = {
  embedder: 'builtin',
  reranker: 'none',
  modelCacheDir: TEST_MODEL_CACHE,
  ollamaHost: 'http://127.0.0.1:11434',
  openaiBaseUrl: 'https://api.openai.com',
};

const invalid = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('invalid_request');
    return err as AppError;
  }
  throw new Error('expected an invalid_request AppError');
};

describe('model registry', () => {
  it('gives the built-in model the configured threads for its passages (--model-threads: replicas sharing a machine split its cores)', async () => {
    const osThreads = () => readdirSync('/proc/self/task').length;
    // onnxruntime's pool has one thread fewer than the session's intra-op threads (the caller's is the other).
    const added = async (modelThreads: number): Promise<number> => {
      const e = createEmbedder({ ...base, modelThreads });
      const before = osThreads();
      try {
        await e.embed(['Sea otters hold hands while they sleep.'], { kind: 'passage' });
        return osThreads() - before;
      } finally {
        await e.close();
      }
    };
    expect((await added(4)) - (await added(1))).toBe(3);
  });

  it('builds each embedder kind', () => {
    expect(createEmbedder(base)).toBeInstanceOf(BuiltinEmbedder);
    const o = createEmbedder({ ...base, embedder: 'ollama:nomic-embed-text' });
    expect(o).toBeInstanceOf(OllamaEmbedder);
    expect(o.id).toBe('ollama:nomic-embed-text');
    const a = createEmbedder({ ...base, embedder: 'openai:text-embedding-3-small', openaiApiKey: 'sk-x' });
    expect(a).toBeInstanceOf(OpenAIEmbedder);
    expect(a.id).toBe('openai:text-embedding-3-small');
  });

  it('builds the builtin embedder at either precision, each with its own embedder id', () => {
    const fp32 = createEmbedder({ ...base, embedder: 'builtin:fp32' }) as BuiltinEmbedder;
    const int8 = createEmbedder({ ...base, embedder: 'builtin:int8' }) as BuiltinEmbedder;
    expect([fp32.precision, fp32.id]).toEqual(['fp32', 'builtin:all-MiniLM-L6-v2']);
    expect([int8.precision, int8.id]).toEqual(['int8', 'builtin:all-MiniLM-L6-v2-int8']);
    expect((createEmbedder(base) as BuiltinEmbedder).precision).toBe(DEFAULT_BUILTIN_PRECISION);
    expect(invalid(() => createEmbedder({ ...base, embedder: 'builtin:bf16' })).message).toBe(
      '"embedder" must be builtin, builtin:fp32, builtin:int8, ollama:<model> or openai:<model> (got "builtin:bf16"); builtin takes a precision, not a model name',
    );
  });

  it('keeps colons inside model names (ollama tags)', () => {
    expect(createReranker({ ...base, reranker: 'ollama:qwen2.5:1.5b' })!.id).toBe('ollama:qwen2.5:1.5b');
  });

  it('builds each reranker kind, null for none', () => {
    expect(createReranker(base)).toBeNull();
    expect(createReranker({ ...base, reranker: 'ollama:llama3.2' })).toBeInstanceOf(OllamaReranker);
    const http = createReranker({ ...base, reranker: 'http:https://api.jina.ai/v1/rerank#jina-reranker-v2-base-multilingual' });
    expect(http).toBeInstanceOf(HttpReranker);
    expect(http!.id).toBe('http:https://api.jina.ai/v1/rerank#jina-reranker-v2-base-multilingual');
    expect(createReranker({ ...base, reranker: 'onnx:/srv/models/ms-marco' })).toBeInstanceOf(OnnxReranker);
  });

  it('uses registered factories for rerankers owned elsewhere (builtin)', () => {
    const fake = { id: 'builtin' } as Reranker;
    expect(createReranker({ ...base, reranker: 'builtin' }, { extraRerankers: { builtin: () => fake } })).toBe(fake);
    expect(invalid(() => createReranker({ ...base, reranker: 'builtin' })).message).toBe(
      '"reranker" is builtin, but no builtin reranker was registered with the model registry',
    );
  });

  it('rejects bad strings with the option name and the accepted forms', () => {
    expect(invalid(() => createEmbedder({ ...base, embedder: 'bert' })).message).toBe(
      '"embedder" must be builtin, builtin:fp32, builtin:int8, ollama:<model> or openai:<model> (got "bert")',
    );
    expect(invalid(() => createEmbedder({ ...base, embedder: 'ollama:' })).message).toBe(
      '"embedder" needs a model name: ollama:<model>, e.g. ollama:nomic-embed-text',
    );
    expect(invalid(() => createEmbedder({ ...base, embedder: 'openai:m', openaiBaseUrl: 'ftp://x' })).message).toBe(
      '"openaiBaseUrl" must be an http(s) URL (got "ftp://x")',
    );
    expect(invalid(() => createEmbedder({ ...base, embedder: 'ollama:m', ollamaHost: 'localhost:11434' })).details).toEqual({
      option: 'ollamaHost',
    });
    expect(invalid(() => createReranker({ ...base, reranker: 'cohere' })).message).toBe(
      '"reranker" must be builtin, ollama:<model>, http:<url>, onnx:<dir> or none (got "cohere")',
    );
    expect(invalid(() => createReranker({ ...base, reranker: 'http:not a url' })).message).toBe(
      '"reranker" must be an http(s) URL (got "not a url")',
    );
    expect(invalid(() => createReranker({ ...base, reranker: 'onnx:' })).message).toMatch(/^"reranker" needs a folder/);
    expect(invalid(() => createEmbedder({ ...base, timeoutMs: 0 })).message).toBe(
      '"timeoutMs" must be a positive number of milliseconds (got 0)',
    );
  });

  it('rejects malformed URLs in specs as configuration errors (a bad % in the model name was a URIError)', () => {
    expect(invalid(() => createReranker({ ...base, reranker: 'http:https://api.jina.ai/v1/rerank#50%' })).message).toBe(
      '"reranker" has a model name after # that is not valid percent-encoding (got "50%"); write % as %25',
    );
    expect(createReranker({ ...base, reranker: 'http:https://api.jina.ai/v1/rerank#50%25' })!.id).toBe('http:https://api.jina.ai/v1/rerank#50%');
    for (const url of ['http://', 'https://:443/rerank', 'http://host:99999/rerank', 'http://host:port/rerank', 'ftp://host/rerank', '']) {
      expect(invalid(() => createReranker({ ...base, reranker: `http:${url}` })).message).toBe(`"reranker" must be an http(s) URL (got ${JSON.stringify(url)})`);
    }
    expect(invalid(() => createReranker({ ...base, reranker: 'http:http://host:0/rerank' })).message).toBe(
      '"reranker" must name a port from 1 to 65535 (got "http://host:0/rerank")',
    );
    expect(invalid(() => createEmbedder({ ...base, embedder: 'ollama:m', ollamaHost: 'http://:11434' })).message).toBe(
      '"ollamaHost" must be an http(s) URL (got "http://:11434")',
    );
    expect(invalid(() => createEmbedder({ ...base, embedder: 'openai:m', openaiBaseUrl: 'https://api.openai.com:0' })).details).toEqual({
      option: 'openaiBaseUrl',
    });
  });
});
