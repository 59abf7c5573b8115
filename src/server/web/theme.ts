import { type Theme, THEMES } from '../../web/pages/layout.js';
import type { WebContext } from './session.js';

/**
 * The in-app theme lives in a cookie of this browser (not the account): it applies before sign-in too, and a shared
 * screen in a dark room can differ from the person's laptop. Not a secret; read by no script.
 */
const THEME_COOKIE = 'docsearch_theme';
const YEAR_MS = 365 * 24 * 3600_000;

/** The theme this browser chose; the system's when it chose none (or sent something else). */
export function themeOf(ctx: WebContext): Theme {
  const v = ctx.cookies.get(THEME_COOKIE);
  return THEMES.find((t) => t === v) ?? 'system';
}

/** Keeps `theme` for this browser ('system' forgets the choice). */
export function setTheme(ctx: WebContext, theme: Theme): void {
  if (theme === 'system') ctx.cookies.set(THEME_COOKIE, '', { httpOnly: true, sameSite: 'lax', path: '/', maxAge: 0, overwrite: true });
  else ctx.cookies.set(THEME_COOKIE, theme, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: '/', maxAge: YEAR_MS, overwrite: true });
}
