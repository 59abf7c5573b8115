import type { Html } from '../../web/html.js';
import { withBell, withFlash, withTheme } from '../../web/pages/layout.js';
import { takeFlash } from './flash.js';
import { themeOf } from './theme.js';
import type { WebContext } from './session.js';

/** Sends a page in this browser's theme, with the message a form left for it (see flash.ts) unless the page is an error. */
export function render(ctx: WebContext, page: Html, status = 200): void {
  const message = status < 400 ? takeFlash(ctx) : null;
  ctx.status = status;
  ctx.type = 'html';
  const unread = ctx.state.unreadNotices;
  const shown = unread === undefined ? page : withBell(page, unread);
  const csrfToken = ctx.state.session?.csrfToken;
  ctx.body = withTheme(message ? withFlash(shown, message, csrfToken ? { csrfToken, returnTo: ctx.originalUrl } : undefined) : shown, themeOf(ctx)).value;
}
