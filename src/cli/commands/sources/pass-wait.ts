import { setTimeout as sleep } from 'node:timers/promises';
import { type Source, SOURCE } from '../../api-types.js';
import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { CliError, InterruptedError } from '../../../terminal/errors.js';
import { interruptSignal, notice, warn } from '../../../terminal/io.js';

/** `--wait` of `sources add` and `sources sync`: the pass asked for, awaited and told. */

/** Between two looks at a source whose pass is awaited. */
const POLL_MS = 500;

/**
 * Waits for the end of a pass that began after the request (`asked`, the answer to the sync or the addition: its
 * `updated_at` is the request's time on the server, whose clock alone is compared). A pass already running when the
 * request came in ends with the source due again at once (its `next_sync` is its end), and the pass asked for
 * follows: that one is awaited. A source paused by its owner or a quota runs no pass: said at once.
 */
async function passAfter(ctx: Context, path: string, asked: Source, timeoutMs: number, seen: (s: Source) => void, signal: AbortSignal): Promise<Source> {
  const requested = Date.parse(asked.updated_at);
  if (idle(asked)) return asked;
  notice(ctx.io, `waiting for the pass of ${asked.url} to end…`);
  const deadline = ctx.now() + timeoutMs;
  for (;;) {
    const s = await ctx.http().get(path, { shape: SOURCE, signal });
    seen(s);
    if (idle(s) || ended(s, requested)) return s;
    if (ctx.now() > deadline) {
      throw new CliError(`the pass of ${s.url} did not end within ${timeoutMs / 1000} s (status: ${s.status}); it goes on on the server`, undefined, `docsearch sources show ${s.id}`, 'timeout');
    }
    await sleep(POLL_MS, undefined, { signal });
  }
}

/** Paused with no pass to come: by its owner or a quota (one the deletion guard holds goes on running passes). */
const idle = (s: Source) => s.status === 'paused' && s.held_deletions === null;

/** A pass that began after `requested` has ended: the source is not running, ended after it, and not due again at once. */
function ended(s: Source, requested: number): boolean {
  if (s.status === 'syncing') return false;
  // A failed pass leaves last_sync (the last finished one) as it was: its end is the source's change.
  const end = Math.max(Date.parse(s.last_sync ?? '') || 0, s.status === 'error' ? Date.parse(s.updated_at) : 0);
  const next = Date.parse(s.next_sync ?? '') || 0;
  return end > requested && next > end;
}

function say(ctx: Context, s: Source): void {
  const r = s.last_result;
  if (s.status !== 'error' && r) {
    notice(ctx.io, `pass of ${s.url} finished: ${r.listed} listed, ${r.added} added, ${r.changed} changed, ${r.deleted} deleted, ${r.unchanged} unchanged, ${r.failed} failed (${r.ms} ms)`);
    if (r.deferred > 0) notice(ctx.io, `${r.deferred} changed item(s) left for the next pass: their documents were still being indexed`);
  }
  for (const item of s.item_errors?.items ?? []) warn(ctx.io, `item ${item.path}: ${item.error}`);
  if (s.held_deletions) warn(ctx.io, `${s.held_deletions.count} deletion(s) held for confirmation: docsearch sources sync ${s.id} --confirm removes them`);
}

function failure(s: Source): string {
  if (s.status === 'error') return `the pass of ${s.url} failed: ${s.error ?? 'no reason given'}`;
  if (s.status === 'paused') return `${s.url} is paused (${s.paused_reason ?? 'no reason given'}): no pass runs until it is resumed`;
  return `${s.last_result!.failed} item(s) of ${s.url} failed in the pass`;
}

/**
 * Waits for the pass asked for (see passAfter), then prints the source as it is after it (`--json`) or what it did;
 * throws (exit 1) when it failed. A wait stopped before the pass ended (--timeout, the server gone, Ctrl-C) still prints, with
 * `--json`, the source as last seen (its id, `status: syncing`): the source and its pass exist on the server.
 */
export async function waitForPass(ctx: Context, path: string, asked: Source, timeoutMs: number, json: boolean): Promise<void> {
  let last = asked;
  let s: Source;
  // Ctrl-C ends the wait, not the pass: the source as last seen is still printed (exit 130).
  const interrupt = interruptSignal();
  try {
    s = await passAfter(ctx, path, asked, timeoutMs, (seen) => (last = seen), interrupt.signal);
  } catch (err) {
    const stopped = interrupt.signal.aborted && (err as Error).name === 'AbortError' ? new InterruptedError(`stopped waiting; the pass of ${last.url} goes on on the server`, `docsearch sources show ${last.id}`) : err;
    if (json) await emitJson(ctx, last);
    throw stopped;
  } finally {
    interrupt.dispose();
  }
  if (json) await emitJson(ctx, s);
  else say(ctx, s);
  if (s.status === 'error' || s.status === 'paused' || (s.last_result?.failed ?? 0) > 0) throw new CliError(failure(s), undefined, `docsearch sources show ${s.id}`);
}
