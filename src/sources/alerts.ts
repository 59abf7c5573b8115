import type { HeldDeletions, SourceRecord } from '../store/sql/sources.js';

/** Passes failed in a row before a source's people are told (a server that blinked once is not news). */
export const FAILING_AFTER = 3;

/**
 * Who is told when a source needs someone (the daemon's wiring: server/source-alerts.ts): its project's owners and
 * editors, by a notice in the web (the bell) and by e-mail when the server sends mail. Each is called once per
 * episode: when the guard begins holding deletions, when a quota pauses the source, and when the passes have failed
 * FAILING_AFTER times in a row.
 */
export interface SourceAlerts {
  held(source: SourceRecord, held: HeldDeletions): Promise<void>;
  /** A quota paused it (`reason`: which quota, how full): it runs no pass until someone resumes it. */
  paused(source: SourceRecord, reason: string): Promise<void>;
  failing(source: SourceRecord, error: string, failures: number): Promise<void>;
}
