import { type IO, notice, terminalWidth } from '../../terminal/io.js';
import { count } from './plural.js';
import { wrap } from './wrap.js';

/** What a command over several items did before something stopped it (see sayStopped). */
export interface Stopped {
  /** How many of `total` were done. */
  done: number;
  total: number;
  noun: string;
  plural?: string;
  /** Those the server refused before the stop, each `name (id): why`. */
  failed: string[];
  /** The items not done, as the same command takes them again (ids, file paths); or, where none can be named, what to do. */
  notDone: string[] | string;
}

/** A shell word: quoted only when it must be, so a person can paste the list into the command again. */
const shellWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);

/**
 * The text-mode word of a command stopped partway (docs/cli.md, "When a command fails"), on stderr just before the
 * error that stopped it: how many of how many were done and which were not, ready to run again. Under `--json` the
 * document says it (`error` beside the done ones), so nothing is written.
 */
export function sayStopped(io: IO, s: Stopped): void {
  const rest = typeof s.notDone === 'string' ? s.notDone : s.notDone.map(shellWord).join(' ');
  const failed = s.failed.length > 0 ? `, ${s.failed.length} failed` : '';
  // One line however long: the list is for pasting, and a wrapped line would paste as two commands.
  notice(io, `stopped with ${s.done} of ${count(s.total, s.noun, s.plural)} done${failed}${rest ? `; not done: ${rest}` : ''}`);
  for (const f of s.failed) for (const line of wrap(f, terminalWidth(io), '  ', '    ')) notice(io, line);
}
