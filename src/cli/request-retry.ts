/**
 * How the CLI rides through a server that stops answering for a moment: a daemon restarting, a replica killed behind
 * a load balancer (which then answers 502 for the requests that replica held), a dropped connection. A request that
 * is safe to send again (http.ts says which) is sent again with backoff for up to a minute, and the person is told
 * once. What is not retried: a refused connection or an unknown host before the server has ever answered (nothing
 * is listening there: a wrong URL, a daemon not started), and every answer that is not 502, 503 or 504.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiError } from '../terminal/errors.js';
import { isTransient, UnreachableError } from './unreachable.js';

export interface RetryPolicy {
  /** How long a request is asked again once contact is lost. */
  forMs: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

export const RETRY_POLICY: RetryPolicy = { forMs: 60_000, firstDelayMs: 500, maxDelayMs: 8_000 };

/**
 * Contact lost and regained across the requests of one client: said once when it is lost (`notify`, a warning),
 * once when the server answers again (a notice), however many requests were in flight.
 */
export class Contact {
  /** The server has answered this client at least once. */
  private answered = false;
  private lostSince: number | undefined;

  constructor(
    private readonly baseUrl: string,
    private readonly policy: RetryPolicy,
    private readonly notify: (event: 'lost' | 'back', line: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Runs `attempt` (one request, its answer read whole), and again after a transient failure until `policy.forMs`
   * have passed since contact was lost; `signal` (Ctrl-C, a deadline) ends the waiting.
   */
  async retrying<T>(attempt: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    let since: number | undefined;
    let delay = this.policy.firstDelayMs;
    for (;;) {
      try {
        const out = await attempt();
        this.answeredNow();
        return out;
      } catch (err) {
        // An address that never answered is a wrong address (nothing listens, no such host, a port fetch refuses), not
        // a server that went away: said at once. A load balancer's 502–504 is an answer of sorts and is waited out.
        if (!isTransient(err) || (!this.answered && err instanceof UnreachableError)) throw err;
        const now = this.now();
        since ??= now;
        if (now - since >= this.policy.forMs) {
          (err as Error).message += ` (asked again for ${Math.round((now - since) / 1000)} s)`;
          throw err;
        }
        this.lost(err);
        // The last wait ends at the window's end, not a backoff step past it: the window is what the person set.
        await sleep(Math.min(delay, since + this.policy.forMs - now), undefined, { signal }).catch(() => {
          throw err;
        });
        delay = Math.min(delay * 2, this.policy.maxDelayMs);
      }
    }
  }

  /** The head of an answer came: the address is a server's, though its answer may yet be cut off. */
  heard(): void {
    this.answered = true;
  }

  /** A request got its whole answer: what the server said, whatever it was. */
  answeredNow(): void {
    this.answered = true;
    if (this.lostSince === undefined) return;
    this.lostSince = undefined;
    this.notify('back', `${this.baseUrl} answers again`);
  }

  private lost(err: unknown): void {
    if (this.lostSince !== undefined) return;
    this.lostSince = this.now();
    const why = err instanceof UnreachableError ? err.why : `${(err as ApiError).status}`;
    this.notify('lost', `lost contact with ${this.baseUrl} (${why}); retrying for up to ${this.policy.forMs / 1000} s…`);
  }
}
