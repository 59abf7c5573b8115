import { html } from '../html.js';

/**
 * A secret or link shown once, in a read-only field with a Copy button beside it (app.js copies it and selects the
 * field, so Ctrl+C works where the clipboard API does not). The button is hidden until app.js shows it: without
 * script it would do nothing. `label` names the field when no <label> wraps it.
 */
export const copyRow = (id: string, value: string, label?: string) =>
  html`<div class="copy-row"><input type="text" id="${id}" readonly value="${value}"${label ? html` aria-label="${label}"` : null}><button type="button" class="copy" data-copy-target="${id}" data-js hidden>Copy</button></div>`;
