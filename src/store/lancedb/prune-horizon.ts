/**
 * Which table versions may be pruned, worked out from what the upkeeper already knows rather than by listing
 * every version at each pass: listing reads each version's manifest, one object-store request apiece, and with
 * retention in hours a table keeps hundreds of versions.
 *
 * The rule (unchanged): a running search reads the version that was current when it started. A version may go
 * once its successor was committed more than `keepMs` ago. So with `w` the newest version committed by the
 * horizon (now − keepMs), every version with a timestamp before w's was superseded by then, and any cutoff at
 * or below w's timestamp is safe. (A plain `now − keepMs` would not be: the version a search reads may have been
 * written long ago and superseded only just now.)
 *
 * Marks stand for such versions without knowing their exact timestamp: `at` is at most the version's timestamp,
 * `by` at least the time it was committed. An upkeep pass that commits gives one for free (`at` its start, `by`
 * its end, both on this clock, which stamps the commit); a listing gives exact ones. The cutoff is the `at` of
 * the newest mark whose `by` is past the horizon.
 */
export interface VersionMark {
  /** At most the version's timestamp (ms). */
  at: number;
  /** The version existed by then (ms). */
  by: number;
}

export class PruneHorizon {
  /** Ordered by `by`. */
  private marks: VersionMark[] = [];
  private listed = false;

  constructor(private readonly keepMs: number) {}

  /** True until versions were listed once: the marks then cover what was written before this process looked. */
  needsListing(): boolean {
    return !this.listed;
  }

  /** The versions a listing found (their timestamps). */
  learn(timestamps: Date[]): void {
    this.listed = true;
    for (const t of timestamps) this.note({ at: t.getTime(), by: t.getTime() });
  }

  /** A version committed between `at` and `by`. */
  note(mark: VersionMark): void {
    let i = this.marks.length;
    while (i > 0 && this.marks[i - 1]!.by > mark.by) i--;
    this.marks.splice(i, 0, mark);
  }

  /**
   * Versions older than this (ms) may be pruned; 0 when none can be old enough yet. Marks older than the one it
   * comes from are dropped: a later cutoff never goes below it.
   */
  cutoff(now = Date.now()): number {
    const horizon = now - this.keepMs;
    let i = -1;
    while (i + 1 < this.marks.length && this.marks[i + 1]!.by <= horizon) i++;
    if (i < 0) return 0;
    const cut = Math.max(...this.marks.slice(0, i + 1).map((m) => m.at));
    this.marks.splice(0, i + 1, { at: cut, by: this.marks[i]!.by });
    return cut;
  }
}
