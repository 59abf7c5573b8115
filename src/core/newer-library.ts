import { VERSION } from './version.js';

/**
 * A library (its database schema, or its chunk index) written by a newer docsearch than this build. Opening it
 * is refused before anything in it is written: an older build would migrate it backwards, or misread what it
 * does not know. `serve` and the operator commands end with exit code 3 on it (docs/operations.md, Upgrading).
 */
export class NewerLibraryError extends Error {
  override name = 'NewerLibraryError';

  /**
   * `part` names what is newer ("schema", "chunk index format"); `found` and `known` are its numbers. A `found` no
   * higher than `known` is a library of another line (a migration of the same number by another name).
   */
  constructor(
    readonly part: string,
    readonly found: number,
    readonly known: number,
    detail = '',
  ) {
    super(
      found > known
        ? `this library was written by a newer docsearch (${part} ${found}, this build knows ${known}${detail}): upgrade docsearch (this is ${VERSION}); nothing in the library was changed`
        : `this library was written by another build of docsearch (${part} ${found}, a number this build also knows, but${detail.replace(/^;/, '')}): run the docsearch that wrote it (this is ${VERSION}); nothing in the library was changed`,
    );
  }
}
