import { type Html, html, raw } from './html.js';

/**
 * A URL or path that may wrap only after its separators (/ ? & = - _ @ : ;), never inside a word: a long redirect
 * URI fits its table cell at a phone's width and reads whole at a desk's. The text is escaped; <wbr> is ours.
 */
export function breakAtSeparators(text: string): Html {
  return html`${text.split(/(?<=[/?&=\-_@:;])/).map((part, i) => (i ? html`${raw('<wbr>')}${part}` : html`${part}`))}`;
}
