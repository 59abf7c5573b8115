/**
 * The systemd unit the docs give for running docsearch (README.md, "Running it as a service", and
 * docs/scale-out.md): read from the Markdown, so that the tests that start daemons the way it does, and check it,
 * hold what the docs say.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './daemon.js';

/** Every ```ini block of a Markdown file (relative to the repository) that runs `docsearch serve`. */
export function documentedUnits(file: string): string[] {
  const text = readFileSync(join(REPO, file), 'utf8');
  return [...text.matchAll(/```ini\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((unit) => /^ExecStart=\S*docsearch serve\b/m.test(unit));
}

/** The README's unit. */
export const readmeUnit = (): string => {
  const [unit, ...more] = documentedUnits('README.md');
  if (!unit || more.length) throw new Error(`README.md should show one docsearch unit, it shows ${more.length + (unit ? 1 : 0)}`);
  return unit;
};

/** The value of `key` in the unit's [Service] section (the last, as systemd takes it). */
export function unitSetting(unit: string, key: string): string | undefined {
  return [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].at(-1)?.[1];
}

/**
 * The `serve` flags of the unit's ExecStart for instance `instance` (`%i`), its `/var/lib/docsearch` moved to
 * `stateRoot`: what a test passes to `docsearch serve` to start the daemon as the unit does.
 */
export function serveFlags(unit: string, instance: string, stateRoot: string): string[] {
  const [program, command, ...flags] = unitSetting(unit, 'ExecStart')!.split(/\s+/);
  if (!program!.endsWith('/docsearch') || command !== 'serve') throw new Error(`the unit does not run docsearch serve: ${program} ${command}`);
  return flags.map((f) => f.replaceAll('%i', instance).replace(/^\/var\/lib\/docsearch(?=\/|$)/, stateRoot));
}
