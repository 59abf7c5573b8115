import type { ModelStatus } from './embedder.js';

/**
 * What a remote provider's calls say about its service, for health: reachable once a call succeeded,
 * and the last failure's message until the next success. A call its caller cancelled says nothing.
 */
export class CallHealth {
  private ok = false;
  private lastError: string | undefined;

  get reachable(): boolean {
    return this.ok;
  }

  async track<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    try {
      const value = await work();
      this.ok = true;
      this.lastError = undefined;
      return value;
    } catch (err) {
      if (!signal?.aborted) this.lastError = err instanceof Error ? err.message : String(err);
      throw err;
    }
  }

  status(id: string, dimension = 0, open = true): ModelStatus {
    const s: ModelStatus = { loaded: this.ok && open, id, dimension };
    if (this.lastError) s.error = this.lastError;
    return s;
  }
}
