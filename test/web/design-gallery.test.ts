import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GALLERY, galleryHtml } from '../../scripts/design-gallery.js';

describe('the design system gallery (docs/design/components.html)', () => {
  it('is what src/web/pages/components.ts and app.css make now: run `npm run design:gallery` after changing either', () => {
    expect(readFileSync(GALLERY, 'utf8') === galleryHtml()).toBe(true);
  });
});
