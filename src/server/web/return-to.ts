/** Only same-site paths may be returned to after login (no open redirects). */
export function safeReturnTo(value: string | undefined): string | undefined {
  if (!value || !value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return undefined;
  return value;
}
