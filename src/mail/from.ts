import { isIP } from 'node:net';
import { hostname } from 'node:os';

/** The From of mail without --smtp-from: "docsearch <docsearch@host>", the host of the public URL (or the machine's, for an address). */
export function defaultFrom(publicUrl: string): string {
  let host = '';
  try {
    host = new URL(publicUrl).hostname;
  } catch {
    host = '';
  }
  if (!host || isIP(host.replace(/^\[|\]$/g, '')) !== 0) host = hostname() || 'localhost';
  return `docsearch <docsearch@${host}>`;
}
