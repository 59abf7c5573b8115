/**
 * A real mail server for the e-mail tests: Debian's postfix, a private instance from a temp config directory,
 * taking SMTP on a free loopback port and delivering every address of every domain into one Maildir the test reads
 * (postfix's `virtual` delivery agent with a static map). Its master runs in the foreground (`master -d`) so the
 * test owns its process; as root postfix's daemons drop to the `postfix` user and the mail is written as `nobody`.
 * Nothing leaves the machine: there is no relay transport and no local delivery. One address, REFUSED_RECIPIENT, is
 * refused at RCPT with a permanent 5xx answer, as a mail server refuses an unknown mailbox.
 */
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { waitFor } from './eventually.js';
import { freePort } from './ports.js';
import { unmet } from './requirement.js';
import { spawnServer } from './spawned-server.js';

const POSTFIX = '/usr/sbin/postfix';
/** The one address this server refuses for good (550 5.1.1 at RCPT, as for an unknown mailbox): what a mail given up looks like. */
export const REFUSED_RECIPIENT = 'refused@example.com';
const MASTER = '/usr/lib/postfix/sbin/master';

/** One delivered message, parsed enough for the tests. */
export interface Delivered {
  file: string;
  to: string;
  from: string;
  subject: string;
  /** The body, with quoted-printable soft breaks joined. */
  text: string;
  raw: string;
}

export interface Postfix {
  port: number;
  /** smtp://127.0.0.1:<port> */
  url: string;
  /** Every message delivered so far, in the order delivered. */
  messages(): Delivered[];
  /** Waits until a message to `to` (and matching `match`, when given) arrives; returns the first delivered. */
  waitFor(to: string, match?: (m: Delivered) => boolean, timeoutMs?: number): Promise<Delivered>;
  /** The instance's log (postfix's maillog). */
  log(): string;
  stop(): Promise<void>;
}

export function postfixUnavailable(): string | null {
  if (!existsSync(POSTFIX) || !existsSync(MASTER)) return unmet('postfix is not installed (Debian: apt-get install postfix)');
  if (process.getuid?.() !== 0) return unmet('a private postfix instance needs root (its daemons drop to the postfix user)');
  return null;
}

/** Headers unfolded, the body with quoted-printable decoded (nodemailer writes long lines that way). */
function parse(file: string): Delivered {
  const raw = readFileSync(file, 'utf8');
  const split = raw.indexOf('\n\n');
  const head = raw.slice(0, split).replace(/\r?\n[ \t]+/g, ' ');
  const header = (name: string) => new RegExp(`^${name}:[ \\t]*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  let body = raw.slice(split + 2);
  if (/quoted-printable/i.test(header('Content-Transfer-Encoding'))) {
    body = Buffer.from(body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8');
  }
  return { file, to: header('To'), from: header('From'), subject: header('Subject'), text: body, raw };
}

/**
 * Starts an instance; on `port` when given (a test that had the mail server down on that port first); `settings`
 * replace or add main.cf parameters (a relay set up to refuse something).
 */
export async function startPostfix(opts: { port?: number; settings?: Record<string, string> } = {}): Promise<Postfix> {
  const reason = postfixUnavailable();
  if (reason) throw new Error(reason);
  const dir = mkdtempSync(join(tmpdir(), 'docsearch-postfix-'));
  chmodSync(dir, 0o755);
  const conf = join(dir, 'conf');
  const mail = join(dir, 'mail');
  for (const d of [conf, mail]) mkdirSync(d, { recursive: true });
  chownSync(mail, 65534, 65534);
  copyQueueAndData(dir);
  const port = opts.port ?? (await freePort());
  writeConfig(conf, dir, port, mail, opts.settings);
  const server = await spawnServer('postfix', MASTER, ['-c', conf, '-d'], { dir, ports: [port], log: join(dir, 'maillog') });
  const group = server.proc.pid!;
  const stop = async () => {
    // The master's daemons outlived its SIGTERM (smtpd holding the listening socket): an instance started next on
    // the same port had its connections taken by them, mail and all. Its whole process group is killed (while the
    // master, the group's leader, still runs: the group is this one), and nothing of the instance is kept.
    if (server.proc.exitCode === null && server.proc.signalCode === null) process.kill(-group, 'SIGKILL');
    await server.stop();
    await waitFor(() => !groupRunning(group), 20_000, "postfix's daemons to exit", { intervalMs: 20 });
  };
  const inbox = join(mail, 'inbox');
  // In the order they were delivered: a Maildir name sorts by its second only (then by inode), so two mails of one
  // second came back in either order, and a test waiting for "the" mail to an address took whichever sorted first.
  const messages = () =>
    ['new', 'cur']
      .flatMap((sub) => (existsSync(join(inbox, sub)) ? readdirSync(join(inbox, sub)).map((f) => join(inbox, sub, f)) : []))
      .map((file) => ({ file, at: statSync(file).mtimeMs }))
      .sort((a, b) => a.at - b.at || a.file.localeCompare(b.file))
      .map(({ file }) => parse(file));
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async waitFor(to, match, timeoutMs = 30_000) {
      let found: Delivered | undefined;
      await waitFor(
        () => {
          found = messages().find((m) => m.to.includes(to) && (!match || match(m)));
          return found !== undefined;
        },
        timeoutMs,
        `a mail to ${to} delivered by postfix`,
      );
      return found!;
    },
    log: () => (existsSync(join(dir, 'maillog')) ? readFileSync(join(dir, 'maillog'), 'utf8') : ''),
    stop,
  };
}

/** An instance's master.cf (SMTP in on `port`) and main.cf in `conf`, its queue and data in `dir`; `settings` replace or add main.cf parameters. */
function writeConfig(conf: string, dir: string, port: number, mail: string, settings: Record<string, string> = {}): void {
  // The services an SMTP-in, virtual-delivery instance needs, none chrooted (the temp dir is the whole world here).
  writeFileSync(
    join(conf, 'master.cf'),
    `127.0.0.1:${port} inet n - n - - smtpd
cleanup unix n - n - 0 cleanup
qmgr unix n - n 300 1 qmgr
rewrite unix - - n - - trivial-rewrite
bounce unix - - n - 0 bounce
defer unix - - n - 0 bounce
trace unix - - n - 0 bounce
verify unix - - n - 1 verify
flush unix n - n 1000? 0 flush
proxymap unix - - n - - proxymap
smtp unix - - n - - smtp
showq unix n - n - - showq
error unix - - n - - error
retry unix - - n - - error
discard unix - - n - - discard
virtual unix - n n - - virtual
anvil unix - - n - 1 anvil
tlsmgr unix - - n 1000? 1 tlsmgr
scache unix - - n - 1 scache
postlog unix-dgram n - n - 1 postlogd
`,
  );
  const main: Record<string, string> = {
    compatibility_level: '3.6',
    queue_directory: `${dir}/queue`,
    data_directory: `${dir}/data`,
    mail_owner: 'postfix',
    setgid_group: 'postdrop',
    inet_interfaces: '127.0.0.1',
    inet_protocols: 'ipv4',
    myhostname: 'mail.test.internal',
    mydestination: '',
    mynetworks: '127.0.0.0/8',
    local_transport: 'error:no local delivery here',
    alias_maps: '',
    alias_database: '',
    virtual_mailbox_domains: 'static:any',
    virtual_mailbox_maps: 'static:inbox/',
    virtual_mailbox_base: mail,
    virtual_uid_maps: 'static:65534',
    virtual_gid_maps: 'static:65534',
    smtpd_relay_restrictions: 'permit_mynetworks, reject',
    smtpd_recipient_restrictions: `check_recipient_access inline:{ { ${REFUSED_RECIPIENT} = 550 5.1.1 no such mailbox here } }`,
    maillog_file: `${dir}/maillog`,
    maillog_file_prefixes: dir,
    ...settings,
  };
  writeFileSync(join(conf, 'main.cf'), Object.entries(main).map(([k, v]) => `${k} = ${v}\n`).join(''));
  // Postfix reads a configuration file changed within the last second again and again, 300 ms apart, until it is
  // older (one being edited): ~1.5 s at every start. These are written whole; dated a minute back, they are read once.
  const before = new Date(Date.now() - 60_000);
  for (const file of ['master.cf', 'main.cf']) utimesSync(join(conf, file), before, before);
}

/**
 * Postfix's queue and data directories, with the owners and modes its `post-install create-missing` gives them:
 * made once per test process by `postfix check` on an instance that never runs, and copied into each instance's
 * `dir`. The script takes 2–4 s, and a mail test file starts a dozen instances.
 */
let template: string | undefined;
function copyQueueAndData(dir: string): void {
  if (!template) {
    const made = mkdtempSync(join(tmpdir(), 'docsearch-postfix-template-'));
    chmodSync(made, 0o755);
    const conf = join(made, 'conf');
    for (const d of [conf, join(made, 'queue'), join(made, 'data'), join(made, 'mail')]) mkdirSync(d, { recursive: true });
    chownSync(join(made, 'data'), uidOf('postfix'), 0);
    writeConfig(conf, made, 25, join(made, 'mail'));
    execFileSync(POSTFIX, ['-c', conf, 'check'], { stdio: 'pipe' });
    template = made;
  }
  // Each entry made again with the template's mode and owner (directories, all empty, as postfix leaves them).
  for (const sub of ['queue', 'data']) {
    for (const rel of ['', ...readdirSync(join(template, sub), { recursive: true, encoding: 'utf8' })]) {
      const [from, to] = [join(template, sub, rel), join(dir, sub, rel)];
      const stat = statSync(from);
      const { mode, uid, gid } = stat;
      if (stat.isDirectory()) mkdirSync(to);
      else copyFileSync(from, to);
      chmodSync(to, mode & 0o7777);
      chownSync(to, uid, gid);
    }
  }
}

/** Whether a process of process group `group` still runs (a zombie holds no socket and waits for its reaper). */
function groupRunning(group: number): boolean {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, the fields after its last ")" do not.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === group && state !== 'Z') return true;
  }
  return false;
}

function uidOf(user: string): number {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith(`${user}:`));
  if (!line) throw new Error(`no ${user} user: is postfix installed?`);
  return Number(line.split(':')[2]);
}
