import { existsSync } from 'node:fs';

/**
 * What a test needs of the machine: an engine (PostgreSQL, Ceph RGW, haproxy), a browser, a shell, root. On a
 * developer's machine a missing one skips the tests that need it, and the title says why. Under CI (`CI` set, as
 * CI sets it for .ci/run) it is an error instead: .ci/run installs every engine and tool the tests use, so a run
 * that would skip them must fail rather than end "all tests passed".
 */
export const IN_CI = Boolean(process.env.CI) && process.env.CI !== 'false' && process.env.CI !== '0';

/** `reason` (why the tests cannot run here) as it is, or null; under CI a reason is thrown, failing the file. */
export function unmet(reason: string | null): string | null {
  if (reason !== null && IN_CI) {
    throw new Error(`CI is set and ${reason}. .ci/run installs every engine and tool the tests need; under CI a test that cannot run fails instead of skipping.`);
  }
  return reason;
}

/** Why a program or device the tests use is missing (with how to install it), or null when `path` exists. */
export const missingFile = (path: string, install: string): string | null => unmet(existsSync(path) ? null : `${path} is missing (${install})`);
