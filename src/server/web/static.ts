import type Router from '@koa/router';
import { readFile } from 'node:fs/promises';
import type { AppState } from '../state.js';

const ASSETS: Record<string, string> = {
  'app.js': 'application/javascript; charset=utf-8',
  'project.js': 'application/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/** The static assets the pages use, read once from the built package. */
export function staticRoutes(router: Router<AppState>): void {
  const cache = new Map<string, Buffer>();
  router.get('static', '/static/:file', async (ctx, next) => {
    const file = ctx.params.file!;
    const type = ASSETS[file];
    if (!type) return next();
    let body = cache.get(file);
    if (!body) {
      body = await readFile(new URL(`../../web/static/${file}`, import.meta.url));
      cache.set(file, body);
    }
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = body;
  });
}
