import type Router from '@koa/router';
import type { Context } from 'koa';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { assetVersion, contentTag } from '../../web/asset-url.js';
import { notModified } from '../middleware/caching.js';
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

/**
 * The static assets the pages use, read once from the built package; the icon also where browsers ask for it. Pages
 * link them with their content's tag (`?v=`, web/asset-url.ts): that address is kept for good (immutable), and an
 * upgrade links a new one. Any other address of them (none, or a tag of another release, from a page kept since) may be
 * kept but is asked about each time (a 304 by the hash): never the last release's script or style under a new tag.
 */
export function staticRoutes(router: Router<AppState>): void {
  const cache = new Map<string, { body: Buffer; etag: string }>();
  const send = async (ctx: Context, file: string): Promise<void> => {
    let asset = cache.get(file);
    if (!asset) {
      const body = await readFile(file === 'simplewebauthn.js' ? webauthnBundle() : new URL(`../../web/static/${file}`, import.meta.url));
      asset = { body, etag: `"${contentTag(body)}"` };
      cache.set(file, asset);
    }
    const current = ctx.query.v !== undefined && ctx.query.v === assetVersion(file);
    ctx.set('Cache-Control', current ? 'public, max-age=31536000, immutable' : 'public, no-cache');
    if (notModified(ctx, { etag: asset.etag })) return;
    ctx.type = ASSETS[file]!;
    ctx.body = asset.body;
  };
  // Own names only: /static/constructor found Object's function, and the missing file was a 500.
  router.get('static', '/static/:file', async (ctx, next) => (Object.hasOwn(ASSETS, ctx.params.file!) ? send(ctx, ctx.params.file!) : next()));
  router.get('favicon', '/favicon.ico', (ctx) => send(ctx, 'favicon.ico'));
}
