import type { TeamAdmin } from '../access/team-admin.js';
import { systemClock } from '../core/clock.js';
import { isAppError } from '../core/errors.js';
import { printable } from '../core/unsafe-text.js';
import type { ServeConfig } from '../server/config.js';
import type { DatabaseHandle } from '../store/sql/database.js';
import { CliError } from '../terminal/errors.js';
import { type IO, isStdoutTTY } from '../terminal/io.js';
import type { LibraryFlags } from './library-options.js';

export interface TeamRun {
  team: TeamAdmin;
  config: ServeConfig;
  database: DatabaseHandle;
  /** Where the library is, for the words on stderr. */
  where: string;
}

/**
 * Runs an operator's account or group change on the library's database (safe beside running daemons: they read
 * it at every request, so it applies on every replica at once). A refusal is a plain error, not a stack.
 */
export async function withTeamAdmin(io: IO, command: string, flags: LibraryFlags, work: (run: TeamRun) => Promise<void>, more: Record<string, unknown> = {}): Promise<void> {
  // Loaded here, when a command runs: its --help loads no database.
  const [{ openOperatorDatabase, operatorConfig }, { openTeamAdmin }, { operatorAudit }] = await Promise.all([
    import('./operator-database.js'),
    import('../access/open-team-admin.js'),
    import('./operator-audit.js'),
  ]);
  const config = operatorConfig(io, command, { ...more, 'data-dir': flags.dataDir, database: flags.database });
  const database = await openOperatorDatabase(config, { init: flags.init });
  try {
    await work({ team: openTeamAdmin(database.db, systemClock, operatorAudit(database.db, command)), config, database, where: database.shared ? database.location : config.dataDir });
  } catch (err) {
    if (isAppError(err) && err.status < 500) throw new CliError(err.message);
    throw err;
  } finally {
    await database.close();
  }
}

/**
 * Rows for an operator: under a header with aligned columns on a terminal; tab-separated without a header through a
 * pipe. Stored text is printed with control characters replaced, so a name cannot drive the terminal.
 */
export function printRows(io: IO, headers: string[], rows: string[][]): void {
  const cells = rows.map((r) => r.map((c) => printable(c).replace(/[\t\r\n]+/g, ' ')));
  if (!isStdoutTTY(io)) {
    for (const r of cells) io.stdout.write(`${r.join('\t')}\n`);
    return;
  }
  const all = [headers, ...cells];
  const widths = headers.map((_, i) => Math.max(...all.map((r) => [...(r[i] ?? '')].length)));
  for (const r of all) io.stdout.write(`${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]! + c.length - [...c].length))).join('  ').trimEnd()}\n`);
}

/** "1 project", "2 projects". */
export const count = (n: number, one: string): string => `${n} ${one}${n === 1 ? '' : 's'}`;

/** An "Examples:" block for `--help`, as every command ends with. */
export const examples = (...lines: string[]): string => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
