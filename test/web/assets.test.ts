import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/daemon.js';

describe('shipped page assets', () => {
  it('all the CSS and JavaScript the pages load is at most 50 KB', () => {
    const dir = join(REPO, 'src/web/static');
    const total = readdirSync(dir)
      .filter((f) => /\.(css|js)$/.test(f))
      .reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
    expect(total).toBeLessThanOrEqual(50 * 1024);
  });
});
