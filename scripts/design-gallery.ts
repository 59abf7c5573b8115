/**
 * Writes docs/design/components.html: the design system's component gallery (src/web/pages/components.ts) as one
 * file that opens from disk, its stylesheet inlined and no script. `npm run design:gallery`; the test
 * test/web/design-gallery.test.ts fails when the file is not what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { componentsPage } from '../src/web/pages/components.js';

const REPO = resolve(import.meta.dirname, '..');
export const GALLERY = join(REPO, 'docs/design/components.html');

/** The gallery page as a standalone file. */
export function galleryHtml(): string {
  const css = readFileSync(join(REPO, 'src/web/static/app.css'), 'utf8');
  return componentsPage()
    .value.replace(/<link rel="stylesheet" href="\/static\/app\.css[^"]*">/, `<style>\n${css}</style>`)
    .replace(/<script src="\/static\/app\.js[^"]*" defer><\/script>\n/, '');
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  writeFileSync(GALLERY, galleryHtml());
  console.log(`wrote ${GALLERY}`);
}
