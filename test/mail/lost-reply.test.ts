/**
 * A relay that takes a mail and drops the connection before its final reply reaches docsearch (RFC 1047's
 * duplicate): docsearch cannot know the mail went, so it keeps it and sends it again rather than lose it. The relay
 * then delivers it twice; both copies carry one Message-ID (the outbox row's), so mail systems that drop a message
 * they already have (Gmail, Sieve's duplicate test) show it once. Real postfix on loopback, behind a relay in this
 * test that cuts the connection at that moment.
 */
import { createServer, type Server, type Socket, connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { freePort } from '../helpers/ports.js';
import { type Postfix, postfixUnavailable, startPostfix } from '../helpers/postfix.js';

const noPostfix = postfixUnavailable();

/**
 * Passes SMTP between docsearch and postfix; while `armed`, once the client has sent the end of a message
 * (CRLF.CRLF) the server's next bytes (its answer to it) are not passed on: both connections are cut instead.
 */
async function replyCutter(upstreamPort: number): Promise<{ port: number; arm(): void; cuts(): number; close(): Promise<void> }> {
  let armed = false;
  let cuts = 0;
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    open.add(client).add(upstream);
    let tail = '';
    let ended = false;
    client.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString('latin1')).slice(-5);
      if (tail === '\r\n.\r\n') ended = true;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (ended && armed) {
        armed = false;
        cuts++;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    for (const s of [client, upstream]) {
      s.on('error', () => undefined);
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
        open.delete(s);
      });
    }
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    arm: () => (armed = true),
    cuts: () => cuts,
    close: () => {
      for (const s of open) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const messageIdOf = (raw: string): string => /^Message-ID:[ \t]*(.*)$/im.exec(raw.slice(0, raw.indexOf('\n\n')))?.[1]?.trim() ?? '';

describe.skipIf(noPostfix !== null)(`a relay that drops the connection before its final reply${noPostfix ? ` (skipped: ${noPostfix})` : ''}`, () => {
  let daemon: Daemon;
  let postfix: Postfix;
  let cutter: Awaited<ReturnType<typeof replyCutter>>;
  let admin: TestUser;

  beforeAll(async () => {
    postfix = await startPostfix();
    cutter = await replyCutter(postfix.port);
    daemon = await startDaemon({ args: ['--smtp-url', `smtp://127.0.0.1:${cutter.port}`] });
    admin = await addUser(daemon, { email: 'root@example.com' });
  });

  afterAll(async () => {
    await daemon?.stop();
    if (daemon) removeDir(daemon.dataDir);
    await cutter?.close();
    await postfix?.stop();
  });

  it('keeps the mail and sends it again, and both copies carry the same Message-ID', async () => {
    cutter.arm();
    const queued = await api(daemon, '/api/v1/admin/mail/test', { token: admin.apiKey, body: { to: 'twice@example.com' } });
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    const id: string = queued.body.id;
    const mailById = async () => ((await api(daemon, '/api/v1/admin/mail', { token: admin.apiKey })).body.mail as { id: string; status: string; attempts: number }[]).find((m) => m.id === id);
    const waiting = await waitFor(
      async () => {
        const m = await mailById();
        return m && m.attempts >= 1 ? m : null;
      },
      30_000,
      'the attempt whose reply was lost recorded',
    );
    expect(cutter.cuts()).toBe(1);
    // The relay has it, but docsearch cannot know: kept, to be sent again.
    expect(waiting).toMatchObject({ status: 'queued', attempts: 1 });
    const first = await postfix.waitFor('twice@example.com');

    expect((await api(daemon, '/api/v1/admin/mail/retry', { method: 'POST', token: admin.apiKey })).body).toEqual({ queued: 1 });
    await waitFor(async () => (await mailById())?.status === 'sent', 30_000, 'marked sent');
    await waitFor(() => postfix.messages().filter((m) => m.to === 'twice@example.com').length === 2, 30_000, 'the second copy delivered');
    const copies = postfix.messages().filter((m) => m.to === 'twice@example.com');
    expect(copies[0]!.file).toBe(first.file);
    expect(messageIdOf(copies[0]!.raw)).toMatch(/^<.+@.+>$/);
    expect(messageIdOf(copies[1]!.raw), 'one Message-ID for both copies').toBe(messageIdOf(copies[0]!.raw));
  });
});
