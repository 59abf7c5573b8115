import { z } from 'zod';
import { checkHealth } from '../health.js';
import type { Services } from '../services.js';
import { defineRoute } from './route.js';

const Component = z.looseObject({ status: z.enum(['up', 'down']) });
const HealthBody = z.object({ status: z.enum(['ok', 'degraded']), version: z.string(), components: z.record(z.string(), Component) }).meta({ id: 'Health' });

export const healthCheck = (s: Services) =>
  defineRoute({
    name: 'health',
    method: 'GET',
    path: '/health',
    scope: null,
    tag: 'health',
    summary: 'Availability and per-component status (GET or HEAD). No credential needed; reveals no counts or secrets.',
    responses: {
      200: { description: 'Every component is up', schema: HealthBody },
      503: { description: 'At least one component is down', schema: HealthBody },
    },
    async handler() {
      const result = await checkHealth(s.healthProbes);
      return { status: result.status === 'ok' ? 200 : 503, body: { status: result.status, version: s.version, components: result.components } };
    },
  });

