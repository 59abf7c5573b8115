/**
 * A hostile IMAP server (test/helpers/hostile-imap.ts) against a daemon: a literal announced as {4000000000} and then
 * sent without end, a FETCH answered without end, a SEARCH line without end, a SEARCH naming the same UIDs over and
 * over. Each pass ends with a clear error, within the --source-timeout and the daemon's bounds on what it reads (the
 * daemon's RSS stays within 300 MiB of where it was); a repeated UID is one message; a mailbox that answers properly
 * beside them keeps being indexed, and searches keep answering; a SEARCH the server refuses fails the pass, removing
 * nothing (it is no empty folder).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, type Daemon, removeDir, startDaemon } from '../helpers/daemon.js';
import { type HostileImap, type Misbehaviour, startHostileImap } from '../helpers/hostile-imap.js';
import { rssSampler } from '../helpers/rss-sampler.js';
import { SourceClient } from '../helpers/sources.js';

const TIMEOUT_S = 5;

describe('a hostile IMAP server', () => {
  let imap: HostileImap;
  let d: Daemon;
  let client: SourceClient;

  beforeAll(async () => {
    imap = await startHostileImap();
    d = await startDaemon({ args: ['--sources-allow-private', '--source-timeout', String(TIMEOUT_S)] });
    client = new SourceClient(d, (await addUser(d)).apiKey);
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    if (d) removeDir(d.dataDir);
    await imap?.stop();
  });

  const mailbox = async (who: Misbehaviour) => {
    const project = await client.project(`imap ${who}`);
    const source = await client.add(project, { url: `imap://127.0.0.1:${imap.port}/INBOX`, options: { username: who, password: 'secret' } });
    return { project, source };
  };

  it.each([
    ['literal', /sent more than it may in one answer \(Literal size 4000000000 exceeds maximum allowed size of \d+ bytes\), and was left$/],
    ['endless-fetch', /answered a FETCH of 2 messages with more than 104/],
    ['endless-line', /sent more than it may in one answer \(Line length \d+ exceeds maximum allowed size of 33554432 bytes\), and was left$/],
  ] as const)('%s: the pass fails, saying why, within bounded time and memory', async (who, why) => {
    const memory = rssSampler(d.proc.pid!);
    const started = performance.now();
    const { project, source } = await mailbox(who);
    const failed = await client.passAfter(project, source.id, 0, 120_000);
    const seconds = (performance.now() - started) / 1000;
    const { before, peak } = memory.stop();
    console.log(`hostile IMAP ${who}: pass failed after ${seconds.toFixed(1)} s, ${imap.sent.get(who) ?? 0} bytes sent, daemon RSS ${before} → ${peak} MiB`);
    expect(failed.status, JSON.stringify(failed)).toBe('error');
    expect(failed.error).toMatch(why);
    expect(peak - before).toBeLessThan(300);
    expect(seconds).toBeLessThan(60);
    expect(await client.allDocuments(project)).toEqual([]);
  }, 180_000);

  it('repeated UIDs: each message once', async () => {
    const { project, source } = await mailbox('repeated');
    const pass = await client.passAfter(project, source.id, 0);
    expect(pass.error, JSON.stringify(pass)).toBeUndefined();
    expect(pass.last_result).toMatchObject({ listed: 2, added: 2, failed: 0 });
    expect([...(await client.settled(project, source.id, 2)).keys()].sort()).toEqual(['note-1@repeated.example.com.eml', 'note-2@repeated.example.com.eml']);
  }, 180_000);

  it('a message larger than --max-upload-mb: its size is asked first, and it is that item\'s error', async () => {
    const { project, source } = await mailbox('huge');
    const pass = await client.passAfter(project, source.id, 0);
    expect(pass.error, JSON.stringify(pass)).toBeUndefined();
    expect(pass.last_result).toMatchObject({ listed: 2, added: 0, failed: 2 });
    expect(pass.item_errors?.items.map((i) => i.error)).toEqual(['larger than 50 MiB (--max-upload-mb)', 'larger than 50 MiB (--max-upload-mb)']);
  }, 180_000);

  it('a mailbox beside them is indexed, and searches answer', async () => {
    const { project, source } = await mailbox('good');
    const pass = await client.passAfter(project, source.id, 0);
    expect(pass.error, JSON.stringify(pass)).toBeUndefined();
    await client.settled(project, source.id, 2);
    expect((await client.found(project, 'goodwords')).length).toBe(2);

    // Then the server refuses to search the folder: no empty folder (every document gone), but the pass's error.
    imap.refuseSearch = true;
    try {
      const refused = await client.sync(project, source.id);
      expect(refused.status, JSON.stringify(refused)).toBe('error');
      expect(refused.error).toBe(`the mail server would not list the messages of imap://127.0.0.1:${imap.port}/INBOX (INBOX)`);
      expect((await client.documents(project, source.id)).size).toBe(2);
    } finally {
      imap.refuseSearch = false;
    }
  }, 180_000);
});
