import { z } from 'zod';
import { toIso } from '../../core/clock.js';
import type { ReindexStatus } from '../../ingest/reindex.js';
import type { Services } from '../services.js';
import { defineRoute } from './route.js';
import { ErrorBody, Timestamp } from './schemas.js';

const ReindexSchema = z
  .object({
    required: z.boolean().describe('stored vectors come from another embedder than the configured one'),
    running: z.boolean(),
    from: z.string().nullable().describe('embedder the stored vectors come from'),
    to: z.string().describe('the configured embedder'),
    done: z.number().int(),
    total: z.number().int(),
    progress: z.number().min(0).max(1),
    started_at: Timestamp.nullable(),
    finished_at: Timestamp.nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: 'Reindex' });

const toWire = (st: ReindexStatus) => ({
  required: st.required,
  running: st.running,
  from: st.from,
  to: st.to,
  done: st.done,
  total: st.total,
  progress: st.total > 0 ? st.done / st.total : st.running ? 0 : 1,
  started_at: st.started_at === null ? null : toIso(st.started_at),
  finished_at: st.finished_at === null ? null : toIso(st.finished_at),
  error: st.error,
});

/**
 * Re-embedding is one shared index-wide operation, not a per-user one. Starting it is harmless (it only runs
 * when the configured embedder differs from the index's, and then search is unavailable until it is done), so
 * any caller allowed to write documents may start it.
 */
export const startReindex = (s: Services) =>
  defineRoute({
    name: 'reindex.start',
    method: 'POST',
    path: '/reindex',
    scope: 'write:documents',
    tag: 'reindex',
    summary: 'Re-embed every stored chunk with the configured embedder when the index was built with another one. Search answers 409 until done.',
    responses: {
      200: { description: 'Nothing to do: the index matches the configured embedder', schema: ReindexSchema },
      202: { description: 'Re-index running (started now or earlier); poll GET /reindex', schema: ReindexSchema },
      401: { description: 'No credential', schema: ErrorBody },
    },
    async handler() {
      const already = s.reindex.status().running;
      const st = s.reindex.start();
      // Only the call that starts one is an action; asking again while it runs changes nothing.
      if (st.running && !already) await s.audit.record({ type: 'reindex.started', details: { from: st.from, to: st.to } });
      return { status: st.running ? 202 : 200, body: toWire(st) };
    },
  });

export const reindexStatus = (s: Services) =>
  defineRoute({
    name: 'reindex.status',
    method: 'GET',
    path: '/reindex',
    scope: 'read:documents',
    tag: 'reindex',
    summary: 'Whether a re-index is needed or running, with its progress.',
    responses: { 200: { description: 'Re-index state', schema: ReindexSchema } },
    async handler() {
      return { status: 200, body: toWire(s.reindex.status()) };
    },
  });
