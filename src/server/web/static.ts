import type Router from '@koa/router';
import type { Context } from 'koa';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AppState } from '../state.js';

const ASSETS: Record<string, string> = {
  'app.js': 'application/javascript; charset=utf-8',
  'project.js': 'application/javascript; charset=utf-8',
  'passkeys.js': 'application/javascript; charset=utf-8',
  'simplewebauthn.js': 'application/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'favicon.ico': 'image/x-icon',
};

/**
 * @simplewebauthn/browser's own browser bundle, from the installed package (its exports name only the module entry,
 * so the bundle is found beside it): the passkey forms' WebAuthn calls, without a copy of it in our tree.
 */
function webauthnBundle(): URL {
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  return pathToFileURL(join(dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'));
}

/** The static assets the pages use, read once from the built package; the icon also where browsers ask for it. */
export function staticRoutes(router: Router<AppState>): void {
  const cache = new Map<string, Buffer>();
  const send = async (ctx: Context, file: string): Promise<void> => {
    let body = cache.get(file);
    if (!body) {
      body = await readFile(file === 'simplewebauthn.js' ? webauthnBundle() : new URL(`../../web/static/${file}`, import.meta.url));
      cache.set(file, body);
    }
    ctx.type = ASSETS[file]!;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = body;
  };
  router.get('static', '/static/:file', async (ctx, next) => (ASSETS[ctx.params.file!] ? send(ctx, ctx.params.file!) : next()));
  router.get('favicon', '/favicon.ico', (ctx) => send(ctx, 'favicon.ico'));
}
