/**
 * The trash's retention: what has been in the trash longer than `--trash-days` is removed for good, hourly and once
 * at start, by one process of a shared library (the holder of the index upkeep lease, store/lancedb/upkeep.ts: it
 * already rewrites the chunk tables alone, and two purging at once would race on the same rows and files).
 */
export interface TrashPurgeOptions {
  purge: () => Promise<number>;
  /** Whether this process is the one that purges now (always true for a library of its own). */
  leader: () => boolean;
  everyMs: number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** Starts the schedule; the returned function stops it. */
export function scheduleTrashPurge(opts: TrashPurgeOptions): () => void {
  let running: Promise<void> | undefined;
  const run = () => {
    if (running || !opts.leader()) return;
    running = opts
      .purge()
      .then(
        (documents) => {
          if (documents > 0) opts.log.info({ event: 'trash.purged', documents }, `removed ${documents} document${documents === 1 ? '' : 's'} whose time in the trash was over`);
        },
        (err: unknown) => opts.log.warn({ err }, 'could not empty the trash of expired documents; trying again later'),
      )
      .finally(() => (running = undefined));
  };
  run();
  const timer = setInterval(run, opts.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
