/**
 * What a daemon loads, thread by thread: it runs under test/helpers/record-requires.cjs, which records in every
 * thread the modules it require()s (createRequire's included) and the packages it imports by name, and the worker
 * threads each thread starts. For checks that a library loads only on first use (docs/search.md#languages,
 * docs/ingest.md).
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type Daemon, REPO } from './daemon.js';

export interface RecordedThread {
  /** Its thread id (0: the main thread). */
  id: number;
  /** What it was started on (a file: URL, or `eval`); the main thread's is `main`. */
  script: string;
  /** The packages it has loaded so far. */
  packages: Set<string>;
}

export interface RecordedDaemon {
  /** A daemon's start options that run it under the recorder. */
  options: { env: Record<string, string> };
  /** The threads seen so far, the main thread first. */
  threads: () => RecordedThread[];
  /** The packages loaded so far, on any thread. */
  loaded: () => Set<string>;
  /**
   * The same once `d` has answered one more request, so a load deferred to after a response (detect.ts
   * `loadedDetector`) has been recorded: a check for what is not loaded could otherwise pass by reading too early.
   */
  loadedBy: (d: Daemon) => Promise<Set<string>>;
}

/** A package's name: a file's is the folder after its last node_modules; an import's, its bare name without a subpath. */
function packageOf(line: string): string | undefined {
  const imported = /^import (.+)$/.exec(line);
  if (imported) {
    const specifier = imported[1]!;
    return specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
  }
  return /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(line)?.[1];
}

export function recordedDaemon(): RecordedDaemon {
  const file = join(mkdtempSync(join(tmpdir(), 'docsearch-loads-')), 'loads.txt');
  const threads = (): RecordedThread[] => {
    const byId = new Map<number, RecordedThread>([[0, { id: 0, script: 'main', packages: new Set() }]]);
    const thread = (id: number) => byId.get(id) ?? byId.set(id, { id, script: '', packages: new Set() }).get(id)!;
    for (const line of existsSync(file) ? readFileSync(file, 'utf8').split('\n') : []) {
      const m = /^(\d+) (.*)$/.exec(line);
      if (!m) continue;
      const started = /^worker (\d+) (.*)$/.exec(m[2]!);
      if (started) thread(Number(started[1])).script = started[2]!;
      else {
        const name = packageOf(m[2]!);
        if (name) thread(Number(m[1])).packages.add(name);
      }
    }
    return [...byId.values()].sort((a, b) => a.id - b.id);
  };
  const loaded = () => new Set(threads().flatMap((t) => [...t.packages]));
  return {
    options: { env: { NODE_OPTIONS: `--require ${join(REPO, 'test/helpers/record-requires.cjs')}`, DOCSEARCH_TEST_REQUIRES_FILE: file } },
    threads,
    loaded,
    loadedBy: async (d) => {
      expect((await fetch(`${d.url}/api/v1/health`)).status).toBe(200);
      return loaded();
    },
  };
}
