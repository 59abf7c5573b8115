import type { Html } from '../../web/html.js';
import { withBell, withFlash, withoutShortcut, withTheme } from '../../web/pages/layout.js';
import { takeFlash } from './flash.js';
import { shortcutOn } from './search-shortcut.js';
import { themeOf } from './theme.js';
import type { WebContext } from './session.js';

/** Sends a page in this browser's theme (and without the `/` shortcut where it is off), with the message a form left for it (see flash.ts) unless the page is an error. */
export function render(ctx: WebContext, page: Html, status = 200): void {
  const message = status < 400 ? takeFlash(ctx) : null;
  ctx.status = status;
  ctx.type = 'html';
  const unread = ctx.state.unreadNotices;
  const belled = unread === undefined ? page : withBell(page, unread);
  const shown = shortcutOn(ctx) ? belled : withoutShortcut(belled);
  const csrfToken = ctx.state.session?.csrfToken;
  ctx.body = withTheme(message ? withFlash(shown, message, csrfToken ? { csrfToken, returnTo: ctx.originalUrl } : undefined) : shown, themeOf(ctx)).value;
}
