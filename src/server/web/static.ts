import type Router from '@koa/router';
import type { Context } from 'koa';
import { readFile } from 'node:fs/promises';
import type { AppState } from '../state.js';

const ASSETS: Record<string, string> = {
  'app.js': 'application/javascript; charset=utf-8',
  'project.js': 'application/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'favicon.ico': 'image/x-icon',
};

/** The static assets the pages use, read once from the built package; the icon also where browsers ask for it. */
export function staticRoutes(router: Router<AppState>): void {
  const cache = new Map<string, Buffer>();
  const send = async (ctx: Context, file: string): Promise<void> => {
    let body = cache.get(file);
    if (!body) {
      body = await readFile(new URL(`../../web/static/${file}`, import.meta.url));
      cache.set(file, body);
    }
    ctx.type = ASSETS[file]!;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = body;
  };
  router.get('static', '/static/:file', async (ctx, next) => (ASSETS[ctx.params.file!] ? send(ctx, ctx.params.file!) : next()));
  router.get('favicon', '/favicon.ico', (ctx) => send(ctx, 'favicon.ico'));
}
