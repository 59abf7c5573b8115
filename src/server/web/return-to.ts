/** Only same-site paths may be returned to after login (no open redirects). */
export function safeReturnTo(value: string | undefined): string | undefined {
  if (!value || !value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return undefined;
  return value;
}

/** `path` with where to go after it (`?return_to=`), when there is somewhere. */
export const withReturn = (path: string, returnTo: string | null | undefined): string => (returnTo ? `${path}?return_to=${encodeURIComponent(returnTo)}` : path);
