import type { Context } from 'koa';

/** The page each marked POST's answer is sent as (see `answerAsPage`); a request's mark goes with it. */
const pages = new WeakMap<Context, string>();

/**
 * Post/Redirect/Get for a form answered with a page (a refusal saying why, with what was typed): that answer is kept
 * in the session and sent to the GET of `page` it redirects to (303), so reloading it reloads `page` and re-posts
 * nothing (the browser asked to send the form again, and sent it). The web session middleware does both halves.
 */
export function answerAsPage(ctx: Context, page: string): void {
  pages.set(ctx, page);
}

/** Where this POST's answer is to be shown, when its route said so. */
export function answeredAsPage(ctx: Context): string | undefined {
  return pages.get(ctx);
}
