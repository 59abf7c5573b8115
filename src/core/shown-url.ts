/**
 * A URL (or what was meant to be one, or a spec holding one) quoted for an error message, with whatever stands
 * between `//` and the last `@` of its authority masked: a refused `--ollama-host ftp://user:password@host` must
 * not print the password to a log. Works on text that does not parse, which is when a refusal quotes it.
 */
export function shownUrl(text: string): string {
  return JSON.stringify(text.replace(/\/\/[^?#]*@/, '//***@'));
}
