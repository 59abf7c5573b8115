/**
 * An invitation link is used once, and not after it expires, decided by the write that uses it (InviteStore.consume):
 * the web form reads the link first, but two tabs or people posting at once both pass that read, and only this write
 * tells them apart (docs/mail.md: "choose a password, once, within 7 days"). On both engines.
 */
import { expect, it } from 'vitest';
import { InviteStore } from '../../src/store/sql/invites.js';
import { describeEachEngine } from '../helpers/store-dialects.js';

const HOUR = 3600_000;

describeEachEngine('invitation links', (suite) => {
  it('are used by one caller only, and by none once expired', async () => {
    const { db } = suite.handle();
    let at = Date.UTC(2026, 11, 2);
    const invites = new InviteStore(db, () => at);
    await invites.create('a'.repeat(64), 'once-invite@example.com', null, HOUR, { admin: true, groupId: null });
    expect(await invites.consume('a'.repeat(64))).toEqual({ email: 'once-invite@example.com', admin: true, groupId: null });
    expect(await invites.consume('a'.repeat(64))).toBeNull();

    await invites.create('b'.repeat(64), 'late-invite@example.com', null, HOUR);
    at += HOUR;
    expect(await invites.consume('b'.repeat(64))).toBeNull();
  });
});
