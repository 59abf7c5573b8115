export interface ComponentHealth {
  status: 'up' | 'down';
  /** Non-secret facts safe for anonymous callers (model id, dimension). */
  [detail: string]: unknown;
}

export type HealthProbe = () => Promise<ComponentHealth>;

/** Runs every component probe with a time limit; a probe that hangs or throws counts as down. */
export async function checkHealth(
  probes: Record<string, HealthProbe>,
  timeoutMs = 2000,
): Promise<{ status: 'ok' | 'degraded'; components: Record<string, ComponentHealth> }> {
  const entries = await Promise.all(
    Object.entries(probes).map(async ([name, probe]) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<ComponentHealth>((resolve) => {
        timer = setTimeout(() => resolve({ status: 'down', error: 'timed out' }), timeoutMs);
      });
      try {
        const result = await Promise.race([probe().catch((): ComponentHealth => ({ status: 'down' })), timeout]);
        return [name, result] as const;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const components = Object.fromEntries(entries);
  const up = entries.every(([, c]) => c.status === 'up');
  return { status: up ? 'ok' : 'degraded', components };
}

/**
 * How long the answer of a probe that asks a remote engine (PostgreSQL, S3) is reused (see sharedProbe): how
 * soon an outage shows in health. A round of them (the AWS SDK's HeadBucket, a LanceDB listing, a PostgreSQL round
 * trip) is dear: once a second it was a third of an idle replica's CPU behind a load balancer and a measurable part
 * of shared-mode ingestion (bench/results/scale.md). Five seconds is still well inside a
 * load balancer's usual fall window, and every replica sees a shared engine go at about the same time anyway.
 */
export const REMOTE_PROBE_REUSE_MS = 5000;

/**
 * A probe whose answer is shared: checks that arrive while it runs wait for that run, and checks within `maxAgeMs`
 * of the end of a run that found the engine up get its answer. For probes that are a request to a remote store: a
 * load balancer checking every few hundred ms, on every replica, otherwise keeps the store busy and the replicas'
 * CPU with it (see REMOTE_PROBE_REUSE_MS). A store that goes away shows within `maxAgeMs`. A `down` answer is not
 * reused: the next check asks again, so one failed or slow probe does not keep a replica out of a load balancer's
 * rotation for the whole window.
 */
export function sharedProbe(probe: HealthProbe, maxAgeMs: number, now: () => number = Date.now): HealthProbe {
  let running: Promise<ComponentHealth> | undefined;
  let last: { at: number; result: ComponentHealth } | undefined;
  return () => {
    if (last && last.result.status === 'up' && now() - last.at < maxAgeMs) return Promise.resolve(last.result);
    running ??= probe()
      .then((result) => {
        last = { at: now(), result };
        return result;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}

/** `compute`'s answer, computed again once it is older than `maxAgeMs` (callers meanwhile share it; a failure is not kept). */
export function reusedFor<T>(maxAgeMs: number, compute: () => Promise<T>, now: () => number = Date.now): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (last && now() - last.at < maxAgeMs) return last.value;
    const value = compute();
    const entry = { at: now(), value };
    last = entry;
    value.catch(() => {
      if (last === entry) last = undefined;
    });
    return value;
  };
}
