import { AppError } from '../core/errors.js';

/**
 * A model provider failed. `transient` tells the ingest queue whether retrying later can help
 * (connection refused, timeout, 5xx, queue full) or not (model not pulled, bad key, bad response).
 * It is an AppError with `service_unavailable` so the server renders it as a 503 without leaking the
 * provider's message; `provider` names where it came from for logs.
 */
export class ModelError extends AppError {
  readonly transient: boolean;
  readonly provider: string;

  constructor(provider: string, message: string, options: { transient: boolean; cause?: unknown }) {
    super('service_unavailable', message, { cause: options.cause });
    this.name = 'ModelError';
    this.provider = provider;
    this.transient = options.transient;
  }
}

export function isModelError(err: unknown): err is ModelError {
  return err instanceof ModelError;
}
