import type { Context } from '../../context.js';
import { ApiError, CliError, errorJson, InterruptedError } from '../../../terminal/errors.js';
import { interruptSignal, terminalWidth } from '../../../terminal/io.js';
import { count } from '../../output/plural.js';
import { sayStopped } from '../../output/stopped.js';
import { wrap } from '../../output/wrap.js';
import { isTransient } from '../../unreachable.js';

/** A document (or trash entry) a command acts on, as its report names it. */
export interface Named {
  id: string;
  filename: string;
  path?: string | null;
}

/** One the server refused: in `--json` output's `failed`, and in the error that ends the command. */
export interface Failure {
  id: string;
  name: string;
  error: string;
}

export const nameOf = (d: Named): string => d.path ?? d.filename;

/**
 * What a pass over several documents did: each result, each refusal (with the error itself, for failIfAny), and the
 * error that stopped it before the rest were tried, if one did.
 */
export interface Outcome<R> {
  done: R[];
  failed: Failure[];
  errors: ApiError[];
  stopped?: unknown;
  /** When stopped: the one it stopped at and those after it, none of them tried to the end. */
  notTried: Named[];
}

/**
 * Does `act` to each document in turn, going on past one the server refuses, so one refusal neither leaves the rest
 * untried nor hides what was already done; `said` tells of each done one as it happens. Any other error (the
 * server gone even after the client asked again, the login refused) would fail every document alike, so it stops
 * the pass; what was done is still reported (outcomeJson) before failIfAny ends the command with it.
 */
export async function eachDocument<D extends Named, R>(docs: D[], act: (d: D) => Promise<R>, said: (d: D, r: R) => void): Promise<Outcome<R>> {
  const out: Outcome<R> = { done: [], failed: [], errors: [], notTried: [] };
  // Ctrl-C stops the pass once the request in flight is answered, so what was done is reported (exit 130); a second
  // Ctrl-C ends the process at once.
  const interrupt = interruptSignal();
  try {
    for (const [i, d] of docs.entries()) {
      if (interrupt.signal.aborted) return { ...out, stopped: new InterruptedError('interrupted (Ctrl-C)'), notTried: docs.slice(i) };
      try {
        const r = await act(d);
        out.done.push(r);
        said(d, r);
      } catch (err) {
        if (!(err instanceof ApiError) || isTransient(err)) return { ...out, stopped: err, notTried: docs.slice(i) };
        out.failed.push({ id: d.id, name: nameOf(d), error: err.message });
        out.errors.push(err);
      }
    }
    return out;
  } finally {
    interrupt.dispose();
  }
}

/** The `failed` list of a pass's `--json`, and `error` when something stopped it (docs/cli.md, "When a command fails"). */
export const outcomeJson = (o: Outcome<unknown>): { failed: Failure[]; error?: { code: string; message: string } } =>
  o.stopped === undefined ? { failed: o.failed } : { failed: o.failed, error: errorJson(o.stopped) };

/**
 * Ends a command that went through several documents: with the error that stopped it (after the `stopped with…` line
 * naming the ones not done), else exit 1 naming each refused one, after what was done was said.
 * One document alone fails with the server's error as it came, hint included. `noun` names other things (saved searches),
 * and `by` how the command is given them again (saved searches by name).
 */
export function failIfAny(ctx: Context, outcome: Outcome<unknown>, total: number, noun = 'document', plural = `${noun}s`, by: 'id' | 'name' = 'id'): void {
  const { failed, errors } = outcome;
  const said = (f: Failure) => `${f.name} (${f.id}): ${f.error}`;
  if (outcome.stopped !== undefined) {
    const notDone = [...failed.map((f) => (by === 'id' ? f.id : f.name)), ...outcome.notTried.map((d) => (by === 'id' ? d.id : nameOf(d)))];
    // One alone needs no count: its error says it all.
    if (total > 1) sayStopped(ctx.io, { done: outcome.done.length, total, noun, plural, failed: failed.map(said), notDone });
    throw outcome.stopped;
  }
  if (failed.length === 0) return;
  if (total === 1) throw errors[0]!;
  const width = terminalWidth(ctx.io);
  const lines = [`${failed.length} of ${count(total, noun, plural)} failed:`, ...failed.flatMap((f) => wrap(said(f), width, '  ', '    '))];
  throw new CliError(lines.join('\n'));
}
