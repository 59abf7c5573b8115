/**
 * The files the developer docs (DEVELOPING.md, architecture.md, design.md) send a reader to are there: a path under
 * src/, scripts/, test/…, or one inside a room (`admin/`, `store/objects/`), names a file or folder of the checkout.
 *
 * docs/DEVELOPING.md, "Rooms": `npm test` (test/core/architecture.test.ts) holds src/ to the room table, no import
 * circles, no orphan files and the packages only one room may use. That test passes on a tree that keeps the rules;
 * this one shows the same configuration, run the same way, refuses a tree that breaks each of them, so the check
 * cannot pass by matching nothing. And the packages' homes the document names are the configuration's.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cruise, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const CONFIG = join(ROOT, '.dependency-cruiser.mjs');

/** A small src/ that breaks each rule once; every other import in it is allowed. */
const BROKEN: Record<string, string> = {
  // core imports no other room, and core ↔ server is a circle.
  'src/core/clock.ts': `import { app } from '../server/app.js';\nexport const now = (): unknown => app;\n`,
  'src/server/app.ts': `import { now } from '../core/clock.js';\nexport const app = { now };\n`,
  // Koa is the server's alone.
  'src/web/page.ts': `import Koa from 'koa';\nimport { app } from '../server/app.js';\nexport const page = [Koa, app];\n`,
  // Nothing imports it and it imports nothing.
  'src/search/lonely.ts': `export const lonely = 1;\n`,
};

describe('the room rules refuse a tree that breaks them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rooms-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a room importing one it may not, a circle, a package outside its home and an orphan are each named', async () => {
    for (const [path, text] of Object.entries(BROKEN)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    writeFileSync(join(dir, 'package.json'), readFileSync(join(ROOT, 'package.json')));
    writeFileSync(join(dir, 'tsconfig.json'), readFileSync(join(ROOT, 'tsconfig.json')));
    const options = { ...(await extractDepcruiseOptions(CONFIG)), baseDir: dir };
    const { output } = await cruise(['src'], options, {}, { tsConfig: extractTSConfig(join(dir, 'tsconfig.json')) });
    // node_modules is a link to the checkout's, which the resolver names by its real path.
    const found = (output as ICruiseResult).summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to.replace(/^.*node_modules\//, 'node_modules/')}`);
    expect(found.sort()).toEqual([
      'no-circular: src/core/clock.ts → src/server/app.ts',
      'no-orphans: src/search/lonely.ts → src/search/lonely.ts',
      'package-home-server: src/web/page.ts → node_modules/koa/lib/application.js',
      'room-core: src/core/clock.ts → src/server/app.ts',
      'room-web: src/web/page.ts → src/server/app.ts',
    ]);
  });

  it('the homes DEVELOPING.md names for single-room packages are the configuration\'s', async () => {
    const doc = readFileSync(join(ROOT, 'docs', 'DEVELOPING.md'), 'utf8');
    const sentence = doc.slice(doc.indexOf('the packages only one\nroom may use'), doc.indexOf('), and fails when the table'));
    const named = [...sentence.matchAll(/\sin\s`([a-z/]+\/)`/g)].map((m) => m[1]!).sort();
    const { default: config } = (await import(pathToFileURL(CONFIG).href)) as { default: { forbidden: IForbiddenRuleType[] } };
    const homes = config.forbidden
      .filter((r) => r.name?.startsWith('package-home-'))
      .map((r) => /^\^src\/\(([^|)]+)/.exec(String((r.from as { pathNot: string }).pathNot))![1]!)
      .sort();
    expect(named.length).toBeGreaterThan(5);
    expect(named).toEqual(homes);
  });
});

describe('the paths the developer docs name', () => {
  it('each names a file or folder of the checkout', () => {
    const rooms = new Set(readdirSync(join(ROOT, 'src')));
    const checked: string[] = [];
    const missing: string[] = [];
    for (const doc of ['DEVELOPING.md', 'architecture.md', 'design.md']) {
      const text = readFileSync(join(ROOT, 'docs', doc), 'utf8');
      for (const [, path] of text.matchAll(/`([\w.-]+(?:\/[\w.-]*)+)`/g)) {
        const first = path!.split('/')[0]!;
        const file = ['src', 'scripts', 'test', 'bin', 'docs', '.ci', 'dist'].includes(first) ? path! : rooms.has(first) ? `src/${path}` : null;
        if (file === null) continue;
        checked.push(file);
        if (!existsSync(join(ROOT, file))) missing.push(`${doc}: \`${path}\``);
      }
    }
    expect(checked.length).toBeGreaterThan(40);
    expect(missing).toEqual([]);
  });
});
