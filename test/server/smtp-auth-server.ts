import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { waitFor } from '../helpers/eventually.js';

/**
 * A mail server that asks for a password: plain SMTP on a loopback port, AUTH PLAIN and LOGIN against one user and
 * password, and no mail taken before a good login (530). What the daemon sends it is kept in memory. Postfix (the
 * mail tests' server) takes mail without a login, so it cannot show that `--smtp-url`'s password was used.
 */
export interface AuthSmtpServer {
  port: number;
  /** smtp://user:password@127.0.0.1:port */
  url: string;
  /** The AUTH arguments as they came over the wire (base64), from logins that succeeded. */
  authArguments: string[];
  /** Logins refused (a wrong user or password). */
  refused: number;
  /** Waits for a message to `to` and returns its data (headers and body, quoted-printable decoded). */
  waitFor(to: string, timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
}

interface Received {
  to: string[];
  data: string;
}

const decodeQuotedPrintable = (s: string) => s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

export async function startAuthSmtpServer(user: string, password: string): Promise<AuthSmtpServer> {
  const messages: Received[] = [];
  const sockets = new Set<Socket>();
  const state = { authArguments: [] as string[], refused: 0 };
  const plain = (arg: string) => Buffer.from(arg, 'base64').toString('utf8') === `\0${user}\0${password}`;

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    const reply = (line: string) => socket.write(`${line}\r\n`);
    let buffer = '';
    let authed = false;
    let mode: 'command' | 'data' | 'plain' | 'login-user' | 'login-password' = 'command';
    let loginUser = '';
    let wire: string[] = [];
    let envelope: Received = { to: [], data: '' };
    const login = (ok: boolean) => {
      mode = 'command';
      if (ok) {
        authed = true;
        state.authArguments.push(...wire);
        reply('235 2.7.0 Authentication successful');
      } else {
        state.refused++;
        reply('535 5.7.8 Authentication credentials invalid');
      }
    };
    const line = (l: string) => {
      if (mode === 'data') {
        if (l === '.') {
          mode = 'command';
          messages.push(envelope);
          envelope = { to: [], data: '' };
          reply('250 2.0.0 Ok: queued');
        } else envelope.data += `${l.startsWith('..') ? l.slice(1) : l}\r\n`;
        return;
      }
      if (mode === 'plain') return void ((wire = [l]), login(plain(l)));
      if (mode === 'login-user') {
        wire = [l];
        loginUser = Buffer.from(l, 'base64').toString('utf8');
        mode = 'login-password';
        return void reply('334 UGFzc3dvcmQ6');
      }
      if (mode === 'login-password') {
        wire.push(l);
        return login(loginUser === user && Buffer.from(l, 'base64').toString('utf8') === password);
      }
      const [verb = '', ...rest] = l.split(' ');
      const arg = rest.join(' ');
      switch (verb.toUpperCase()) {
        case 'EHLO':
          return void socket.write('250-localhost\r\n250-AUTH PLAIN LOGIN\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n');
        case 'HELO':
          return void reply('250 localhost');
        case 'AUTH': {
          const [method = '', initial] = arg.split(' ');
          if (method.toUpperCase() === 'PLAIN') {
            if (initial) return void ((wire = [initial]), login(plain(initial)));
            mode = 'plain';
            return void reply('334 ');
          }
          if (method.toUpperCase() === 'LOGIN') {
            mode = 'login-user';
            return void reply('334 VXNlcm5hbWU6');
          }
          return void reply('504 5.5.4 Unrecognized authentication type');
        }
        case 'MAIL':
          if (!authed) return void reply('530 5.7.0 Authentication required');
          envelope = { to: [], data: '' };
          return void reply('250 2.1.0 Ok');
        case 'RCPT':
          if (!authed) return void reply('530 5.7.0 Authentication required');
          envelope.to.push(/<([^>]*)>/.exec(arg)?.[1] ?? arg);
          return void reply('250 2.1.5 Ok');
        case 'DATA':
          if (!authed || envelope.to.length === 0) return void reply('503 5.5.1 Bad sequence of commands');
          mode = 'data';
          return void reply('354 End data with <CR><LF>.<CR><LF>');
        case 'RSET':
          envelope = { to: [], data: '' };
          return void reply('250 2.0.0 Ok');
        case 'NOOP':
          return void reply('250 2.0.0 Ok');
        case 'QUIT':
          reply('221 2.0.0 Bye');
          return void socket.end();
        default:
          return void reply('502 5.5.2 Error: command not recognized');
      }
    };
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (let i = buffer.indexOf('\r\n'); i >= 0; i = buffer.indexOf('\r\n')) {
        const l = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        line(l);
      }
    });
    reply('220 localhost ESMTP test server');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}`,
    get authArguments() {
      return state.authArguments;
    },
    get refused() {
      return state.refused;
    },
    waitFor: (to, timeoutMs = 30_000) =>
      waitFor(() => {
        const m = messages.find((msg) => msg.to.includes(to));
        return m ? decodeQuotedPrintable(m.data) : undefined;
      }, timeoutMs, `a mail to ${to}`),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
