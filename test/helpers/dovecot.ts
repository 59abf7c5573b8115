/**
 * A real IMAP server for the source tests: Debian's Dovecot (dovecot-imapd) on a free loopback port, plain IMAP
 * with password login (no TLS: loopback only), one user whose mail is a maildir under a temp dir. Tests deliver
 * mail the way a local delivery agent does: a file in the maildir's new/ folder. As root Dovecot runs its
 * processes as its own users and the mail as `nobody`; otherwise everything runs as the current user.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { unmet } from './requirement.js';
import { spawnServer } from './spawned-server.js';

const DOVECOT = '/usr/sbin/dovecot';

export interface Dovecot {
  host: string;
  port: number;
  /** With `saslPort`: where a mail server asks Dovecot to check a login (postfix's `smtpd_sasl_type = dovecot`). */
  saslPort: number | undefined;
  user: { name: string; password: string };
  /** Delivers a message (RFC 5322 text) into a folder (INBOX by default); returns its maildir file. */
  deliver(message: string, folder?: string): string;
  /** Removes a delivered message from the maildir (as an expunge by another client would). */
  remove(file: string): void;
  /** Every message file of a folder. */
  files(folder?: string): string[];
  /** Changes the user's password at the server: what a source holds stops working. */
  setPassword(password: string): void;
  /** The server stopped (its port refuses) until `resume()`, then started again as it was. */
  halt(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

export function dovecotUnavailable(): string | null {
  return existsSync(DOVECOT) && existsSync('/usr/lib/dovecot/imap') ? null : unmet('Dovecot is not installed (Debian: apt-get install dovecot-imapd)');
}

/** `saslPort`: also answer a mail server's SASL questions on a loopback port (an SMTP relay's logins, test/mail). */
export async function startDovecot(opts: { saslPort?: boolean } = {}): Promise<Dovecot> {
  const reason = dovecotUnavailable();
  if (reason) throw new Error(reason);
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-dovecot-'));
  chmodSync(dir, 0o755);
  const root = process.getuid?.() === 0;
  const me = userInfo();
  const mailUid = root ? 65534 : me.uid;
  const mailGid = root ? 65534 : me.gid;
  const user = { name: 'mailuser', password: `pw-${randomBytes(6).toString('hex')}` };
  const home = join(dir, 'mail', user.name);
  const maildir = join(home, 'Maildir');
  for (const sub of ['cur', 'new', 'tmp']) mkdirSync(join(maildir, sub), { recursive: true });
  for (const d of [join(dir, 'mail'), home, maildir, join(maildir, 'cur'), join(maildir, 'new'), join(maildir, 'tmp')]) chownSync(d, mailUid, mailGid);
  // Read at each login (no auth cache is configured).
  const setPassword = (password: string) => writeFileSync(join(dir, 'users'), `${user.name}:{PLAIN}${password}\n`, { mode: 0o644 });
  setPassword(user.password);
  const port = await freePort();
  const saslPort = opts.saslPort ? await freePort() : undefined;
  const sasl = saslPort === undefined ? '' : `service auth {\n  inet_listener sasl {\n    address = 127.0.0.1\n    port = ${saslPort}\n  }\n}\n`;
  writeFileSync(
    join(dir, 'dovecot.conf'),
    `base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
first_valid_uid = ${Math.min(mailUid, 1)}
${root ? 'default_internal_user = dovecot\ndefault_login_user = dovenull' : `default_internal_user = ${me.username}\ndefault_login_user = ${me.username}`}
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/users
}
userdb {
  driver = static
  args = uid=${mailUid} gid=${mailGid} home=${dir}/mail/%u
}
mail_location = maildir:~/Maildir
namespace inbox {
  inbox = yes
  separator = /
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
service imap-login {
  chroot =
}
${sasl}`,
  );
  const ports = saslPort === undefined ? [port] : [port, saslPort];
  const server = await spawnServer('dovecot', DOVECOT, ['-F', '-c', join(dir, 'dovecot.conf')], { dir, ports, log: join(dir, 'dovecot.log') });
  const { halt, resume } = server;
  const stop = async () => {
    // Killed, its whole process group (while the master, the group's leader, still runs: the group is this one): a
    // clean shutdown took 6 s (auth and imap-login wait 5 s for the stats process's handshake, gone first), and
    // nothing of this instance is kept.
    if (server.proc.exitCode === null && server.proc.signalCode === null) process.kill(-server.proc.pid!, 'SIGKILL');
    await server.stop();
  };
  let n = 0;
  const folderDir = (folder = 'INBOX') => (folder === 'INBOX' ? maildir : join(maildir, `.${folder.replaceAll('/', '.')}`));
  return {
    host: '127.0.0.1',
    port,
    saslPort,
    user,
    deliver(message, folder) {
      const base = folderDir(folder);
      for (const sub of ['cur', 'new', 'tmp']) {
        if (!existsSync(join(base, sub))) {
          mkdirSync(join(base, sub), { recursive: true });
          chownSync(base, mailUid, mailGid);
          chownSync(join(base, sub), mailUid, mailGid);
        }
      }
      const file = join(base, 'new', `${Date.now()}.${process.pid}_${++n}.${hostname()}`);
      writeFileSync(file, message.replace(/\r?\n/g, '\n'));
      chownSync(file, mailUid, mailGid);
      return file;
    },
    remove(file) {
      const name = file.split('/').pop()!;
      // Dovecot may have moved it from new/ to cur/ (with flags appended to its name).
      for (const sub of ['new', 'cur']) {
        const base = join(file, '..', '..', sub);
        for (const f of existsSync(base) ? readdirSync(base) : []) if (f.startsWith(name)) rmSync(join(base, f));
      }
    },
    files(folder) {
      const base = folderDir(folder);
      return ['new', 'cur'].flatMap((sub) => (existsSync(join(base, sub)) ? readdirSync(join(base, sub)).map((f) => join(base, sub, f)) : []));
    },
    setPassword,
    halt,
    resume,
    stop,
  };
}
