import { z } from 'zod';
import { toIso } from '../../../core/clock.js';
import { formatEvery } from '../../../sources/every.js';
import { KIND_NAMES } from '../../../sources/kind.js';
import type { SourceService } from '../../../sources/service.js';
import type { SourceRecord } from '../../../store/sql/sources.js';
import { Timestamp } from '../schemas.js';
import { MAX_EVERY_CHARS } from '../../../core/source-limits.js';

export const SOURCE_STATUSES = ['active', 'syncing', 'paused', 'error'] as const;
export type SourceStatus = (typeof SOURCE_STATUSES)[number];

/**
 * What people see of a source's state: paused (by its owner, or the deletion guard holding its deletions), else a
 * pass running, else the last pass failed, else active.
 */
export const sourceStatus = (s: Pick<SourceRecord, 'status' | 'syncingSince' | 'error' | 'heldDeletions'>): SourceStatus =>
  s.status === 'paused' || s.heldDeletions !== null ? 'paused' : s.syncingSince !== null ? 'syncing' : s.error !== null ? 'error' : 'active';

/** Why a source is paused: its owner, or the guard (whose passes go on adding and changing files). */
export const pausedReason = (s: Pick<SourceRecord, 'status' | 'pausedReason' | 'heldDeletions'>): string | null =>
  s.status === 'paused' ? (s.pausedReason ?? 'paused by its owner') : (s.heldDeletions?.reason ?? null);

const PassResultSchema = z.object({
  listed: z.number().int(),
  added: z.number().int(),
  changed: z.number().int(),
  deleted: z.number().int(),
  unchanged: z.number().int(),
  failed: z.number().int(),
  deferred: z.number().int(),
  ms: z.number().int(),
});

export const SourceSchema = z
  .object({
    id: z.string(),
    project_id: z.string(),
    kind: z.enum(KIND_NAMES),
    url: z.string().describe('without credentials'),
    every: z.string().describe('the schedule, e.g. "15m", "1h"'),
    status: z.enum(SOURCE_STATUSES).describe('active (scheduled), syncing (a pass is running), paused (see paused_reason), error (the last pass failed: see error; retried with backoff)'),
    paused_reason: z.string().nullable().describe('why the source is paused: the deletion guard (its passes go on adding and changing files), or its owner'),
    held_deletions: z
      .object({
        count: z.number().int().describe('documents the source would remove'),
        items: z.array(z.object({ path: z.string(), document_id: z.string(), filename: z.string().nullable() })).describe('the first 500 of them, by path'),
      })
      .nullable()
      .describe('deletions the guard holds for confirmation (resume, or sync with confirm, lets them through); null: none'),
    last_sync: Timestamp.nullable().describe('when the last pass finished'),
    next_sync: Timestamp.nullable().describe('when the next pass is due (null while paused)'),
    last_result: PassResultSchema.nullable().describe('what the last finished pass did'),
    error: z.string().optional().describe('why the last pass failed'),
    options: z.record(z.string(), z.unknown()).describe("the kind's options, without secrets"),
    secrets: z.array(z.string()).describe('names of the secret options set (their values are never shown)'),
    secrets_to_reenter: z
      .array(z.string())
      .describe("secret options to enter again (PATCH options): its credentials were sealed under another secrets key and cannot be read; empty otherwise"),
    labels: z.array(z.string()).describe('label names it puts on every document it brings (an extra of docsearch: docs/api.md#labels)'),
    item_errors: z
      .object({ count: z.number().int(), items: z.array(z.object({ path: z.string(), error: z.string(), at: Timestamp })) })
      .optional()
      .describe('items whose last fetch failed, or that were passed over for their path (one source only)'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Source' });

export function sourceToWire(source: SourceRecord, service: SourceService) {
  return {
    id: source.id,
    project_id: source.projectId,
    kind: source.kind,
    url: source.url,
    every: formatEvery(source.everyMs),
    status: sourceStatus(source),
    paused_reason: pausedReason(source),
    held_deletions: source.heldDeletions
      ? { count: source.heldDeletions.count, items: source.heldDeletions.items.map((i) => ({ path: i.path, document_id: i.documentId, filename: i.filename })) }
      : null,
    last_sync: source.lastSyncAt === null ? null : toIso(source.lastSyncAt),
    next_sync: source.status === 'paused' ? null : toIso(source.nextSyncAt),
    last_result: source.lastResult,
    ...(source.error !== null ? { error: source.error } : {}),
    options: source.options,
    secrets: service.secretNames(source),
    secrets_to_reenter: service.secretsToReenter(source),
    labels: source.labels,
    created_at: toIso(source.createdAt),
    updated_at: toIso(source.updatedAt),
  };
}

export const SourceParams = z.strictObject({ id: z.string().min(1).max(100), sid: z.string().min(1).max(100) });
export const SourceOptions = z.record(z.string(), z.unknown()).describe("the kind's options (docs/sources.md); secret ones (password, secret_access_key) are sealed and never shown");
export const Every = z.string().max(MAX_EVERY_CHARS).describe('a duration: "15m", "1h" (default), "1d"');
