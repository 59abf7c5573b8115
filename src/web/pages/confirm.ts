import { type Html, html } from '../html.js';
import { layout, type Section } from './layout.js';

export interface ConfirmData {
  user: { email: string };
  csrfToken: string;
  active: Section;
  /** The question, as the page title and heading: "Delete “notes.pdf”?". */
  title: string;
  /** What happens, and what can't be undone. */
  body: Html;
  /** Where the confirmed form posts, with its hidden fields. */
  action: string;
  /** The form's id, for fields in `body` that belong to it (`form=` attribute). */
  formId?: string;
  fields?: Record<string, string | readonly string[]>;
  /** Fields the person fills in before confirming (whom to hand things to), above the buttons. */
  inputs?: Html;
  /** Why the last try was refused, said above the form. */
  error?: string;
  /** The button's words: the action itself ("Delete 3 documents"), never "OK". */
  confirm: string;
  /** Where Cancel goes: the page the user came from. */
  cancel: string;
}

/**
 * A destructive action asks first, on a page of its own: works without JavaScript, names what is lost, and
 * Cancel goes back. The form posts the session's CSRF token like every other.
 */
export function confirmPage(d: ConfirmData) {
  const hidden = Object.entries(d.fields ?? {}).flatMap(([name, v]) => (typeof v === 'string' ? [v] : v).map((value) => html`<input type="hidden" name="${name}" value="${value}">`));
  return layout(
    { title: d.title, user: d.user, csrfToken: d.csrfToken, active: d.active },
    html`<section class="card narrow confirm">
  <h1>${d.title}</h1>
  ${d.body}
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  <form method="post" action="${d.action}"${d.formId ? html` id="${d.formId}"` : null}${d.inputs ? html` class="stack"` : null}>
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    ${hidden}
    ${d.inputs}
    <div class="actions">
      <button type="submit" class="danger" id="confirm">${d.confirm}</button>
      <a href="${d.cancel}" class="button">Cancel</a>
    </div>
  </form>
</section>`,
  );
}
