import { cutUnits } from '../../core/code-points.js';
import { DOCUMENT_ID } from '../../core/document-id.js';
import { type AppError, isAppError } from '../../core/errors.js';
import { sentence } from '../../web/format.js';
import type { Flash } from '../../web/pages/layout.js';
import { answerAsPage } from './answer-as-page.js';
import type { WebContext } from './session.js';

/** One message for the next page (what a form just did), read and cleared by that page's render. */
const FLASH_COOKIE = 'ds_flash';
const FLASH_MAX_CHARS = 600;
/** Documents an Undo may name (a cookie holds about 4 KB: 100 ids of 26 characters fit). */
const FLASH_MAX_UNDO = 100;

/**
 * Says what a form did on the page it redirects to ("Deleted “notes.pdf”."). A cookie rather than a query
 * parameter, so nobody can put words on someone else's page through a link.
 */
export function flash(ctx: WebContext, text: string, kind: Flash['kind'] = 'notice', undo: readonly string[] = []): void {
  // The ids after "&": encodeURIComponent leaves none in the text.
  const ids = undo.filter((id) => DOCUMENT_ID.test(id)).slice(0, FLASH_MAX_UNDO);
  // Cut between characters (a lone half of an emoji made encodeURIComponent throw: a 500 after the form's work was
  // done, and an invitation's one-time link lost), and saying so.
  const shown = text.length > FLASH_MAX_CHARS ? `${cutUnits(text, FLASH_MAX_CHARS - 1)}…` : text;
  const value = `${kind === 'error' ? 'e' : 'n'}${encodeURIComponent(shown)}${ids.length ? `&${ids.join(',')}` : ''}`;
  ctx.cookies.set(FLASH_COOKIE, value, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: '/', maxAge: 60_000, overwrite: true });
}

/** The message a form left for this page, cleared as it is read. */
export function takeFlash(ctx: WebContext): Flash | null {
  const raw = ctx.cookies.get(FLASH_COOKIE);
  if (!raw) return null;
  ctx.cookies.set(FLASH_COOKIE, '', { httpOnly: true, sameSite: 'lax', path: '/', maxAge: 0, overwrite: true });
  try {
    const [text, ids] = raw.slice(1).split('&');
    const undo = (ids ?? '').split(',').filter((id) => DOCUMENT_ID.test(id)).slice(0, FLASH_MAX_UNDO);
    return { kind: raw.startsWith('e') ? 'error' : 'notice', text: cutUnits(decodeURIComponent(text!), FLASH_MAX_CHARS), ...(undo.length ? { undo } : {}) };
  } catch {
    return null;
  }
}

/**
 * Runs a form's change and goes back to `to` (303) saying what happened: `work`'s sentence, or the refusal (an
 * AppError under 500) as an error. Anything else is thrown on. With `showRefusal`, a refusal is that page instead,
 * rendered with the form as it was typed (a flash alone would empty the form), and sent after a 303 to it all the
 * same (answer-as-page.ts), so a reload does not post the form again.
 */
export async function redirectWithOutcome(
  ctx: WebContext,
  to: string | { done: string; refused: string },
  work: () => Promise<string>,
  showRefusal?: (error: string, status: number) => Promise<void>,
): Promise<void> {
  let where = typeof to === 'string' ? to : to.done;
  try {
    flash(ctx, await work());
  } catch (err) {
    if (showRefusal) {
      const refusal = refused(err);
      answerAsPage(ctx, typeof to === 'string' ? to : to.refused);
      return showRefusal(sentence(refusal.message), refusal.status);
    }
    flashRefusal(ctx, err);
    if (typeof to !== 'string') where = to.refused;
  }
  ctx.status = 303;
  ctx.redirect(where);
}

/**
 * A refusal: an AppError under 500. Anything else is thrown on, and so is a role or right short (403): that is the
 * "not allowed" page, as on every other page.
 */
export function refused(err: unknown): AppError {
  if (!isAppError(err) || err.status >= 500 || err.status === 403) throw err;
  return err;
}

/** A refusal (see `refused`) as the next page's error message. */
export function flashRefusal(ctx: WebContext, err: unknown): void {
  flash(ctx, sentence(refused(err).message), 'error');
}
