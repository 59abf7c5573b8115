import type Router from '@koa/router';
import type { Services } from '../services.js';
import type { AppState } from '../state.js';
import { checkMetricsRequest, FORWARDING_HEADERS, metricsAccess } from './access.js';

export const METRICS_PATH = '/metrics';

/**
 * GET /metrics in the Prometheus text format, for this replica's own numbers (access.ts says who may read it).
 * Mounted beside /api/v1 and /mcp, before the web session middleware: a scrape makes no session and needs no CSRF token.
 */
export function metricsRoutes(router: Router<AppState>, s: Services): void {
  const access = metricsAccess(s.config);
  router.get('metrics', METRICS_PATH, async (ctx) => {
    checkMetricsRequest(access, {
      authorization: ctx.get('authorization') || undefined,
      forwarded: FORWARDING_HEADERS.some((h) => ctx.get(h) !== ''),
      host: ctx.get('host') || undefined,
    });
    const { body, contentType } = await s.metrics.render();
    ctx.set('Cache-Control', 'no-store');
    ctx.type = contentType;
    ctx.body = body;
  });
}
