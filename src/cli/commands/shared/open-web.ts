import type { Context } from '../../context.js';
import { emitJson } from '../../output/json.js';
import { isStderrTTY, notice, writeOut } from '../../../terminal/io.js';

/**
 * `--web` (issue #53, as gh has it): the web page for what a command shows. On a terminal the browser opens it; through
 * a pipe, or when no browser opens, the URL goes to stdout (`{url}` with --json), so a script can pass it on.
 * `path` is relative ("search?q=…"), so a server reached under a path prefix keeps it.
 */
export async function openWeb(ctx: Context, path: string): Promise<void> {
  const base = ctx.server().url;
  const url = new URL(path, base.endsWith('/') ? base : `${base}/`).href;
  if (ctx.globals().json) return emitJson(ctx, { url });
  if (isStderrTTY(ctx.io) && (await ctx.browser.open(url))) return notice(ctx.io, `Opened ${url} in your browser.`);
  writeOut(ctx.io, url);
}
