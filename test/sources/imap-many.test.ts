/**
 * An IMAP source's listing of a folder with very many messages, against Dovecot (test/helpers/dovecot.ts): every
 * UID the folder holds is listed, however long their set would be as one command line (Dovecot refuses a line past
 * 64 kB: 14,000 UIDs written out are some 73 kB). In-process (the kind as the scheduler calls it): the listing is
 * what is under test, and a daemon would then index fourteen thousand messages.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import type { ListedItem } from '../../src/sources/kind.js';
import { KINDS } from '../../src/sources/kinds/index.js';
import { Reach } from '../../src/sources/reach.js';
import { type Dovecot, dovecotUnavailable, startDovecot } from '../helpers/dovecot.js';

const MINUTE = 60_000;
const MESSAGES = 14_000;
const SKIP = dovecotUnavailable();

describe.skipIf(SKIP !== null)(`an IMAP folder with ${MESSAGES} messages${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let dovecot: Dovecot;
  const scratch = mkdtempSync(join(tmpdir(), 'docsearch-imap-many-'));
  const abort = new AbortController();

  beforeAll(async () => {
    dovecot = await startDovecot();
    for (let i = 0; i < MESSAGES; i++) {
      dovecot.deliver(`From: a@example.com\nTo: b@example.com\nSubject: note ${i}\nMessage-ID: <note-${i}@many.example.com>\n\nNote ${i}.\n`);
    }
  }, 2 * MINUTE);
  afterAll(async () => {
    abort.abort();
    await dovecot?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('lists every message, each by its Message-ID', async () => {
    const conn = await KINDS.imap!.connect(
      { url: new URL(`imap://${dovecot.host}:${dovecot.port}/INBOX`), options: { username: dovecot.user.name }, secrets: { password: dovecot.user.password } },
      { reach: new Reach(true, 30_000), roots: [], hidden: [], scratchDir: scratch, maxItemBytes: 1 << 20, signal: abort.signal, now: systemClock },
    );
    try {
      const listing = await conn.list({ cursor: null, resumeAfter: null, known: () => undefined, knownPaths: () => [] });
      const items: ListedItem[] = [];
      for await (const item of listing.items) items.push(item);
      expect(listing.complete).toBe(true);
      expect(items).toHaveLength(MESSAGES);
      expect(new Set(items.map((i) => i.path))).toEqual(new Set(Array.from({ length: MESSAGES }, (_, i) => `note-${i}@many.example.com.eml`)));
    } finally {
      await conn.close();
    }
  }, 5 * MINUTE);
});
