/**
 * The page template engine: a tagged template that escapes every interpolated value unless it
 * is already `Html` (the output of another `html` template or of `raw`). Pages are typed
 * functions of their data, so a missing field is a compile error rather than an empty string.
 * Written here because it is a dozen lines and keeps pages plain TypeScript; escaping follows
 * the OWASP rule for HTML body and quoted attribute contexts.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}

/** Trusted markup only (never user data). */
export const raw = (value: string): Html => new Html(value);
