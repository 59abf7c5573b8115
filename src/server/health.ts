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
