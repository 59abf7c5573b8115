import { chmodSync, statSync } from 'node:fs';

/**
 * The library's files hold every user's text (the database, the index, originals, backups, scratch copies made for
 * OCR and office conversion), so what an operator command creates is its user's alone: a umask of 077 makes every
 * file this process — its native libraries (SQLite, LanceDB) and the tools it runs (LibreOffice, tesseract)
 * included — creates 0600 and every folder 0700, whatever the shell's umask, with no mode to forget at each call.
 */
export function keepNewFilesPrivate(): void {
  process.umask(0o077);
}

/** Narrows a folder others may enter or read to 0700; returns the mode it had when it did, else null. */
export function tightenFolder(path: string): number | null {
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) === 0) return null;
  chmodSync(path, 0o700);
  return mode;
}
