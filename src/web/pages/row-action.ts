import { type Html, html } from '../html.js';

/**
 * A row action's words with the row's name for screen readers: "Remove" reads "Remove alice@example.com". The
 * visible words stay first and whole in the accessible name (WCAG 2.5.3, label in name), so voice control finds it.
 */
export const forRow = (words: string, row: string): Html => html`${words}<span class="visually-hidden"> ${row}</span>`;
