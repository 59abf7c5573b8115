import type { WebContext } from './session.js';

/**
 * Whether `/` goes to the search box in this browser: on unless turned off under Settings → Account (WCAG 2.1.4). A
 * cookie, as the theme is (theme.ts): it is this browser's habit, not the account's. Not a secret; read by no script.
 */
const SHORTCUT_COOKIE = 'docsearch_shortcut';
const YEAR_MS = 365 * 24 * 3600_000;

export const shortcutOn = (ctx: WebContext): boolean => ctx.cookies.get(SHORTCUT_COOKIE) !== 'off';

/** Keeps the choice for this browser (on, the default, forgets it). */
export function setShortcut(ctx: WebContext, on: boolean): void {
  if (on) ctx.cookies.set(SHORTCUT_COOKIE, '', { httpOnly: true, sameSite: 'lax', path: '/', maxAge: 0, overwrite: true });
  else ctx.cookies.set(SHORTCUT_COOKIE, 'off', { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: '/', maxAge: YEAR_MS, overwrite: true });
}
