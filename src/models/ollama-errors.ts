/**
 * Ollama-specific wording for failures, shared by the Ollama embedder and reranker: the two mistakes
 * operators actually make are a server that is not running and a model that was never pulled.
 */
import { ModelError } from './errors.js';
import { HttpStatusError, classifyRemoteError, isConnectionError, type RemoteCallOptions } from './remote-call.js';
import { cutUnits } from '../core/code-points.js';

/** The `ollama` client throws ResponseError {error, status_code}; it does not export the class. */
function responseStatus(err: unknown): { status: number; message: string } | undefined {
  if (err instanceof Error && err.name === 'ResponseError') {
    const status = (err as { status_code?: unknown }).status_code;
    if (typeof status === 'number') return { status, message: err.message };
  }
  if (err instanceof HttpStatusError) return { status: err.status, message: err.body };
  return undefined;
}

export function classifyOllamaError(call: RemoteCallOptions, model: string, err: unknown): ModelError | undefined {
  if (err instanceof ModelError) return err;
  if (isConnectionError(err)) {
    return new ModelError('ollama', `Ollama not reachable at ${call.location} — is \`ollama serve\` running?`, {
      transient: true,
      cause: err,
    });
  }
  const answer = responseStatus(err);
  if (!answer) return undefined;
  // Ollama's own words for it (`model "x" not found, try pulling it first`); a bare 404 ("404 page not found": an
  // Ollama too old for the endpoint, another server at that address) is not about a model, and pulling would not help.
  if (/\bmodel\b.*\bnot found\b|try pulling/i.test(answer.message)) {
    return new ModelError('ollama', `model ${model} not pulled — run \`ollama pull ${model}\``, {
      transient: false,
      cause: err,
    });
  }
  return classifyRemoteError(call, new HttpStatusError(answer.status, answer.message.trim()));
}

/** An answer's own `error` text, when a server sent one with HTTP 200 instead of what was asked: for messages. */
export function ollamaSaid(answer: unknown): string {
  const said = (answer as { error?: unknown } | null)?.error;
  return typeof said === 'string' ? ` (it said: ${cutUnits(said, 300)})` : '';
}
