/**
 * An IMAP server that speaks just enough of the protocol for imapflow (greeting, CAPABILITY, LOGIN, SELECT/EXAMINE,
 * UID SEARCH, UID FETCH, LOGOUT) and then misbehaves the way the user name it was logged in with says:
 *
 * - `good`: one message, answered properly (the control: other sources keep working);
 * - `literal`: a FETCH answered with a literal announced as {4000000000}, then bytes without end;
 * - `endless-fetch`: a FETCH answered with message after message, never its tagged end;
 * - `endless-line`: a SEARCH answered with one line that never ends (no CRLF);
 * - `repeated`: a SEARCH naming the same UIDs over and over (1 2 1 2 …), each message answered properly;
 * - `huge`: each message's RFC822.SIZE said to be 60 MB (its source, if asked for, is small).
 *
 * With `refuseSearch` set, every SEARCH is refused (`NO`), whoever asks.
 *
 * Every byte it sends after the misbehaviour starts is counted (`sent`), so a test sees the daemon stopped reading.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export type Misbehaviour = 'good' | 'literal' | 'endless-fetch' | 'endless-line' | 'repeated' | 'huge';

export interface HostileImap {
  port: number;
  /** Bytes sent by each misbehaviour so far. */
  sent: Map<Misbehaviour, number>;
  refuseSearch: boolean;
  stop(): Promise<void>;
}

const message = (uid: number, who: string) =>
  `From: a@example.com\r\nTo: b@example.com\r\nSubject: note ${uid} of ${who}\r\nMessage-ID: <note-${uid}@${who}.example.com>\r\n\r\nA note about ${who}words, number ${uid}.\r\n`;

const envelope = (uid: number, who: string) => `(NIL "note ${uid}" NIL NIL NIL NIL NIL NIL NIL "<note-${uid}@${who}.example.com>")`;

export async function startHostileImap(): Promise<HostileImap> {
  const sockets = new Set<Socket>();
  const sent = new Map<Misbehaviour, number>();
  const self: HostileImap = {
    port: 0,
    sent,
    refuseSearch: false,
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
  const count = (who: Misbehaviour, n: number) => sent.set(who, (sent.get(who) ?? 0) + n);
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let who: Misbehaviour = 'good';
    let buffered = '';
    /** Writes without end while the client reads (backpressure: a client that stops reading stops it). */
    const flood = (piece: string) => {
      const chunk = piece.repeat(Math.max(1, Math.floor(65536 / piece.length)));
      const more = () => {
        while (!socket.destroyed) {
          count(who, chunk.length);
          if (!socket.write(chunk)) return void socket.once('drain', more);
        }
      };
      more();
    };
    const answer = (line: string) => {
      const m = /^(\S+) (?:UID )?(\S+)(?: (.*))?$/i.exec(line);
      if (!m) return;
      const [, tag, verb, rest = ''] = m;
      const ok = (text = 'done') => socket.write(`${tag} OK ${text}\r\n`);
      const isUid = /^\S+ UID /i.test(line);
      switch (verb!.toUpperCase()) {
        case 'CAPABILITY':
          socket.write('* CAPABILITY IMAP4rev1\r\n');
          return ok();
        case 'LOGIN':
          who = (/^"?([\w-]+)"?/.exec(rest)?.[1] ?? 'good') as Misbehaviour;
          return ok('logged in');
        case 'SELECT':
        case 'EXAMINE':
          socket.write(`* FLAGS ()\r\n* 2 EXISTS\r\n* OK [UIDVALIDITY 7] ok\r\n* OK [UIDNEXT 3] ok\r\n`);
          return ok('[READ-WRITE] selected');
        case 'SEARCH':
          if (self.refuseSearch) return void socket.write(`${tag} NO search refused\r\n`);
          if (who === 'endless-line') {
            socket.write('* SEARCH 1 2');
            return flood(' 1 2 3 4 5 6 7 8 9');
          }
          if (who === 'repeated') {
            socket.write(`* SEARCH ${'1 2 '.repeat(5000)}1 2\r\n`);
            return ok();
          }
          socket.write('* SEARCH 1 2\r\n');
          return ok();
        case 'FETCH': {
          if (!isUid) return ok();
          const uids = rest.split(' ')[0]!.split(',').flatMap((part) => {
            const [a, b] = part.split(':').map(Number);
            return b === undefined ? [a!] : Array.from({ length: Math.min(b, 2) - a! + 1 }, (_, i) => a! + i);
          });
          if (who === 'literal') {
            socket.write(`* 1 FETCH (UID 1 ENVELOPE {4000000000}\r\n`);
            return flood('x');
          }
          if (who === 'endless-fetch') {
            let n = 1;
            const more = () => {
              while (!socket.destroyed) {
                const piece = `* ${n} FETCH (UID ${n} ENVELOPE ${envelope(n, who)})\r\n`;
                n++;
                count(who, piece.length);
                if (!socket.write(piece)) return void socket.once('drain', more);
              }
            };
            return more();
          }
          for (const uid of uids) {
            if (/BODY\.PEEK\[\]|BODY\[\]/i.test(rest)) {
              const body = message(uid, who);
              socket.write(`* ${uid} FETCH (UID ${uid} ENVELOPE ${envelope(uid, who)} BODY[] {${Buffer.byteLength(body)}}\r\n${body})\r\n`);
            } else if (/RFC822\.SIZE/i.test(rest)) socket.write(`* ${uid} FETCH (UID ${uid} RFC822.SIZE ${who === 'huge' ? 60_000_000 : Buffer.byteLength(message(uid, who))})\r\n`);
            else socket.write(`* ${uid} FETCH (UID ${uid} ENVELOPE ${envelope(uid, who)})\r\n`);
          }
          return ok();
        }
        case 'LOGOUT':
          socket.write('* BYE\r\n');
          ok();
          return void socket.end();
        default:
          return ok();
      }
    };
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => {
      buffered += data;
      for (let at = buffered.indexOf('\r\n'); at >= 0; at = buffered.indexOf('\r\n')) {
        const line = buffered.slice(0, at);
        buffered = buffered.slice(at + 2);
        answer(line);
      }
    });
    socket.write('* OK hostile IMAP ready\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  self.port = (server.address() as AddressInfo).port;
  return self;
}
