/**
 * `imap`: the messages of a mailbox folder (`imaps://mail.example.com/INBOX`, `imap://host:143/Invoices`), through
 * `imapflow`. Each message is an e-mail document (its attachments become documents attached to it, as for an
 * uploaded .eml). A message's version is its folder, UIDVALIDITY and UID: a pass asks the folder for its UIDs and
 * fetches only the envelopes of UIDs it has not seen, and the bodies of new messages. A message's path is its
 * Message-ID, so a message saved again under a new UID with the same Message-ID (an edited draft) replaces its
 * document, and one moved to the `move_to` folder (which the source then reads too) keeps it.
 *
 * The connection goes to the address the reach check approved; TLS (imaps:, or STARTTLS when the server offers it)
 * checks the certificate against the URL's host name.
 */
import type { ImapFlow } from 'imapflow';
import { z } from 'zod';
import { cutChars } from '../../core/code-points.js';
import { ItemError, type ListedItem, type ListRequest, type SourceConnection, SourceError, type SourceKind } from '../kind.js';
import type { Reach } from '../reach.js';
import { secret, username } from './options.js';
import { MAX_SOURCE_FOLDER_CHARS } from '../../core/source-limits.js';

/** imapflow's codes for a server that stopped answering (the connect, its greeting, STARTTLS, a command). */
const IMAP_TIMEOUTS = new Set(['CONNECT_TIMEOUT', 'GREETING_TIMEOUT', 'UPGRADE_TIMEOUT', 'ETIMEOUT']);

const Options = z.strictObject({
  username,
  password: secret.optional(),
  move_to: z.string().min(1).max(MAX_SOURCE_FOLDER_CHARS).optional().describe('a folder to move each message to once it is indexed (read by the source as well)'),
});

const QUIET = { debug() {}, info() {}, warn() {}, error() {} };

/** UIDs whose envelopes one FETCH asks for. */
const ENVELOPES_PER_FETCH = 1000;

/**
 * The longest line read from the server (a literal apart): a SEARCH answer of a million UIDs is some 7 MB. imapflow's
 * own bounds are a GiB for a line and a literal, 2 GiB for a response: a server that never ends a line, or announces
 * a literal of a GiB and sends it, held that much in the daemon. A literal is bounded by the largest item
 * (`--max-upload-mb`): a message's size is asked before its source.
 */
const MAX_LINE_BYTES = 32 * 1024 * 1024;

/** A Message-ID as a path: its bare form, without characters a path keeps apart. */
const idPath = (messageId: string | undefined, uid: number): string => {
  const bare = (messageId ?? '').trim().replace(/^<|>$/g, '').replace(/[\s/\\]+/g, '_');
  return bare ? `${bare}.eml` : `uid-${uid}.eml`;
};

const versionOf = (folder: string, uidValidity: bigint | number | string, uid: number) => `${folder}\t${uidValidity}\t${uid}`;

function parseVersion(version: string): { folder: string; uid: number } {
  const [folder, , uid] = version.split('\t');
  return { folder: folder!, uid: Number(uid) };
}

/** imapflow's codes for an answer past the bounds the connection reads (MAX_LINE_BYTES, the largest item). */
const TOO_LARGE = new Set(['LiteralTooLarge', 'LineTooLarge', 'ResponseTooLarge']);

function sourceError(err: unknown, where: string, reach: Reach): SourceError {
  if (err instanceof SourceError) return err;
  const e = err as { authenticationFailed?: boolean; responseText?: string; message?: string; code?: string };
  if (e.code !== undefined && TOO_LARGE.has(e.code)) return new SourceError(`the mailbox ${where} could not be read: the mail server sent more than it may in one answer (${e.message}), and was left`);
  if (e.code !== undefined && IMAP_TIMEOUTS.has(e.code)) return new SourceError(`the mailbox ${where} could not be read: ${reach.silence()}`);
  if (e.authenticationFailed) return new SourceError(`the mail server refused the credentials: check username and password (${e.responseText ?? 'authentication failed'})`);
  return new SourceError(`the mailbox ${where} could not be read: ${e.responseText ?? e.message ?? e.code ?? String(err)}`);
}

class ImapConnection implements SourceConnection {
  /**
   * Why the connection ended, as imapflow told it ('error'): the command it ended under says only "Connection not
   * available", which names no cause.
   */
  failure: Error | null = null;

  constructor(
    private readonly client: ImapFlow,
    private readonly folder: string,
    private readonly moveTo: string | undefined,
    private readonly where: string,
    private readonly reach: Reach,
    private readonly maxItemBytes: number,
  ) {}

  async list(request: ListRequest) {
    const folders = this.moveTo ? [this.folder, this.moveTo] : [this.folder];
    // Paths by version, from what earlier passes recorded: a UID seen before needs no envelope again.
    const pathOf = new Map<string, string>();
    for (const path of request.knownPaths()) pathOf.set(request.known(path)!, path);
    const items: ListedItem[] = [];
    const taken = new Set<string>();
    for (const folder of folders) {
      let lock;
      try {
        lock = await this.client.getMailboxLock(folder);
      } catch (err) {
        if (folder === this.moveTo) continue; // not made yet: nothing moved so far
        throw sourceError(this.failure ?? err, `${this.where} (${folder})`, this.reach);
      }
      try {
        await this.listFolder(folder, pathOf, items, taken);
      } catch (err) {
        // A connection imapflow ended (a bound passed) says why; other errors go on as they are.
        throw this.failure && !(err instanceof SourceError) ? sourceError(this.failure, `${this.where} (${folder})`, this.reach) : err;
      } finally {
        lock.release();
      }
    }
    return { complete: true, items: (async function* () { yield* items; })(), cursor: () => null };
  }

  private async listFolder(folder: string, pathOf: Map<string, string>, items: ListedItem[], taken: Set<string>): Promise<void> {
    const box = this.client.mailbox;
    const validity = box === false ? 0 : box.uidValidity;
    // Each UID once, sorted (imapflow drops one a server names twice: test/sources/imap-hostile.test.ts holds it).
    const found = await this.client.search({ all: true }, { uid: true });
    // A refused SEARCH (NO, BAD) is no empty folder: taken for one, every message's document would be gone.
    if (!Array.isArray(found)) throw new SourceError(`the mail server would not list the messages of ${this.where} (${folder})`);
    const uids = found;
    const unseen = uids.filter((uid) => !pathOf.has(versionOf(folder, validity, uid)));
    const ids = new Map<number, string | undefined>();
    // So many UIDs a command: the set goes on the command line as it is, and a server refuses a line past its
    // limit (Dovecot: 64 kB, some 11,000 UIDs).
    for (let i = 0; i < unseen.length; i += ENVELOPES_PER_FETCH) {
      const asked = new Set(unseen.slice(i, i + ENVELOPES_PER_FETCH));
      // A FETCH answered without end (message after message, none asked for) is cut off: what was asked, twice
      // over (a server may add updates of other messages), and no more. Only the UIDs asked for are kept.
      let answers = 0;
      for await (const msg of this.client.fetch([...asked].join(','), { uid: true, envelope: true }, { uid: true })) {
        if (++answers > 2 * asked.size + 100) throw new SourceError(`the mail server answered a FETCH of ${asked.size} messages with more than ${2 * asked.size + 100}: the mailbox ${this.where} was not listed`);
        if (asked.has(msg.uid)) ids.set(msg.uid, msg.envelope?.messageId);
      }
    }
    for (const uid of uids.sort((a, b) => a - b)) {
      const version = versionOf(folder, validity, uid);
      let path = pathOf.get(version) ?? idPath(ids.get(uid), uid);
      // The same Message-ID twice (a copy): each its own item.
      if (taken.has(path)) path = `${path.replace(/\.eml$/, '')}#${uid}.eml`;
      taken.add(path);
      items.push({ path, version });
    }
  }

  async fetch(item: ListedItem) {
    try {
      return await this.fetchMessage(item);
    } catch (err) {
      if (err instanceof ItemError || !this.failure) throw err;
      throw sourceError(this.failure, this.where, this.reach);
    }
  }

  private async fetchMessage(item: ListedItem) {
    const { folder, uid } = parseVersion(item.version);
    const lock = await this.client.getMailboxLock(folder);
    try {
      // Its size first: one larger than an item may be is that item's error, and never read (nor held whole).
      const sized = await this.client.fetchOne(String(uid), { size: true }, { uid: true });
      if (!sized) throw new ItemError('the message is gone');
      if ((sized.size ?? 0) > this.maxItemBytes) throw new ItemError(`larger than ${Math.round(this.maxItemBytes / 1024 / 1024)} MiB (--max-upload-mb)`);
      const msg = await this.client.fetchOne(String(uid), { source: true, envelope: true }, { uid: true });
      if (!msg || !msg.source) throw new ItemError('the message is gone');
      if (this.moveTo && folder === this.folder) {
        // Processed: moved where the source reads it too (its path, the Message-ID, keeps its document).
        const moved = await this.client.messageMove(String(uid), this.moveTo, { uid: true }).catch((err: Error) => {
          throw new ItemError(`the message could not be moved to ${this.moveTo}: ${err.message}`);
        });
        if (!moved) throw new ItemError(`the message could not be moved to ${this.moveTo}`);
      }
      const subject = (msg.envelope?.subject ?? '').replace(/[\\/\p{Cc}]+/gu, ' ').trim();
      return { body: msg.source, filename: `${cutChars(subject, 150).trimEnd() || 'message'}.eml`, metadata: { mailbox: folder } };
    } finally {
      lock.release();
    }
  }

  async close() {
    await this.client.logout().catch(() => this.client.close());
  }
}

export const imap: SourceKind = {
  name: 'imap',
  schemes: ['imap:', 'imaps:'],
  options: Options,
  secretOptions: ['password'],
  urlCredentials: { username: 'username', password: 'password' },
  resumable: false,
  async check(url) {
    if (!url.hostname) return 'an IMAP source is imaps://host/FOLDER (or imap://host:143/FOLDER)';
    return null;
  },
  async connect(setup, env) {
    const o = setup.options as z.infer<typeof Options>;
    const secure = setup.url.protocol === 'imaps:';
    const host = setup.url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(setup.url.port) || (secure ? 993 : 143);
    const { address } = await env.reach.resolve(host, port);
    const folder = decodeURIComponent(setup.url.pathname.replace(/^\/+/, '')) || 'INBOX';
    const where = `${setup.url.protocol}//${setup.url.host}/${folder}`;
    // Loaded on first use: imapflow adds ~25 MiB to a daemon that may never have a mailbox source.
    const { ImapFlow } = await import('imapflow');
    const client = new ImapFlow({
      host: address,
      port,
      secure,
      servername: host,
      auth: { user: o.username, pass: setup.secrets.password ?? '' },
      logger: QUIET,
      connectionTimeout: env.reach.timeoutMs,
      greetingTimeout: env.reach.timeoutMs,
      socketTimeout: env.reach.timeoutMs,
      maxLineLength: MAX_LINE_BYTES,
      // A message's source with its FETCH line around it; the message is asked for only when its size allows.
      maxLiteralSize: env.maxItemBytes + 64 * 1024,
      maxResponseSize: env.maxItemBytes + MAX_LINE_BYTES,
      tls: { servername: host },
    });
    // A socket error after the connection is up would otherwise be thrown as an unhandled 'error' event; the first
    // one is the reason the connection's commands fail.
    let failure: Error | null = null;
    client.on('error', (err: Error) => (failure ??= err));
    try {
      await client.connect();
    } catch (err) {
      throw sourceError(err, where, env.reach);
    }
    // The folder processed mail goes to is made once; it may exist already.
    if (o.move_to) await client.mailboxCreate(o.move_to).catch(() => undefined);
    const connection = new ImapConnection(client, folder, o.move_to, where, env.reach, env.maxItemBytes);
    connection.failure = failure;
    client.on('error', (err: Error) => (connection.failure ??= err));
    return connection;
  },
};
