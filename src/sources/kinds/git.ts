/**
 * `git`: the files of a branch of a Git repository (`https://git.example.com/team/docs.git`, `git://host/repo`),
 * through Debian's `git` binary. Chosen over isomorphic-git: that speaks no git:// protocol, holds whole packfiles in
 * memory and fetches shallowly only in part, where git fetches just the new objects, diffs two commits' trees in
 * milliseconds, and can be pinned to the address the sources' reach check approved (`http.curloptResolve`; a
 * git:// URL is rewritten to that address), with redirects refused and every transport but http(s) and git off.
 *
 * A shallow clone per source lives in the replica's scratch folder. A file's version is its blob id. A pass fetches
 * the branch's head: the same commit as the last pass costs one fetch and lists nothing; otherwise the files that
 * changed between the two commits are listed (incremental by commit diff), or, when the last pass's commit is not
 * at hand (a first pass, another replica's clone), every file of the new one.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ItemError, type ListedItem, type Listing, type SourceConnection, SourceError, type SourceKind } from '../kind.js';
import type { Reach } from '../reach.js';
import { globOptions, secret, username } from './options.js';
import { MAX_SOURCE_FOLDER_CHARS } from '../../core/source-limits.js';

const Options = z.strictObject({
  branch: z.string().min(1).max(MAX_SOURCE_FOLDER_CHARS).regex(/^[^\s~^:?*[\\]+$/, 'must be a branch name').optional().describe('default: the branch the repository\'s HEAD names'),
  username: username.optional(),
  password: secret.optional().describe('a password or an access token'),
  ...globOptions,
});

/** The fetched head, in the clone. */
const HEAD_REF = 'refs/docsearch/head';
/** How much of what git says on stderr is kept (its last lines are the error shown). */
const MAX_STDERR_CHARS = 64 * 1024;

/** Regular files (not symlinks, not submodules). */
const FILE_MODES = new Set(['100644', '100755']);

interface Run {
  stdout: Buffer;
  stderr: string;
  code: number | null;
}

class GitConnection implements SourceConnection {
  private readonly repo: string;

  constructor(
    private readonly url: URL,
    private readonly options: z.infer<typeof Options>,
    private readonly secrets: Record<string, string>,
    scratchDir: string,
    private readonly reach: Reach,
    private readonly signal: AbortSignal,
    private readonly maxItemBytes: number,
  ) {
    this.repo = join(scratchDir, 'repo.git');
  }

  /** The environment git runs in: the source's settings only (no system or user config, no prompts, no hooks). */
  private env(extraEnv: Record<string, string> = {}): Record<string, string> {
    return {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: this.repo,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: '/bin/false',
      GIT_ALLOW_PROTOCOL: 'http:https:git',
      LC_ALL: 'C',
      ...extraEnv,
    };
  }

  /** Runs git in the clone (`env`). */
  private git(args: string[], extraEnv: Record<string, string> = {}): Promise<Run> {
    const env = this.env(extraEnv);
    return new Promise((resolve, reject) => {
      const child = spawn('git', args, { cwd: existsSync(this.repo) ? this.repo : undefined, env, stdio: ['ignore', 'pipe', 'pipe'], signal: this.signal });
      const out: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (b: Buffer) => out.push(b));
      // Only its end is ever shown: a server that sends remote messages without end would otherwise grow it so.
      child.stderr.on('data', (b: Buffer) => (err = (err + b.toString()).slice(-MAX_STDERR_CHARS)));
      child.once('error', (e: NodeJS.ErrnoException) => reject(e.code === 'ENOENT' ? new SourceError('git is not installed on the server (Debian: apt-get install git)') : e));
      child.once('close', (code) => resolve({ stdout: Buffer.concat(out), stderr: err, code }));
    });
  }

  private async ok(args: string[], extraEnv?: Record<string, string>): Promise<Buffer> {
    const r = await this.git(args, extraEnv);
    if (r.code !== 0) throw new SourceError(`git ${args[0]} failed: ${r.stderr.trim().split('\n').slice(-2).join(' ') || `exit code ${r.code}`}`);
    return r.stdout;
  }

  /** Fetches the branch's head into the clone: the remote is reached at the address the reach check approved. */
  private async fetchHead(): Promise<string> {
    if (!existsSync(join(this.repo, 'HEAD'))) await this.ok(['init', '--bare', '--quiet', this.repo]);
    const port = this.url.port || (this.url.protocol === 'https:' ? '443' : this.url.protocol === 'http:' ? '80' : '9418');
    const { address } = await this.reach.resolve(this.url.hostname, Number(port));
    const config: [string, string][] = [
      ['http.followRedirects', 'false'],
      ['protocol.file.allow', 'never'],
      ['core.hooksPath', '/dev/null'],
      // --source-timeout: curl gives up on a transfer slower than 1 byte/s for that long (a server that says nothing).
      ['http.lowSpeedLimit', '1'],
      ['http.lowSpeedTime', String(Math.ceil(this.reach.timeoutMs / 1000))],
    ];
    let remote = this.url.href;
    if (this.url.protocol === 'git:') {
      const pinned = new URL(this.url.href);
      pinned.hostname = address.includes(':') ? `[${address}]` : address;
      remote = pinned.href;
    } else {
      config.push(['http.curloptResolve', `${this.url.hostname}:${port}:${address}`]);
      if (this.options.username) {
        const basic = Buffer.from(`${this.options.username}:${this.secrets.password ?? ''}`).toString('base64');
        // Through the environment, not the command line (which every local user can read).
        config.push(['http.extraHeader', `Authorization: Basic ${basic}`]);
      }
    }
    const env: Record<string, string> = { GIT_CONFIG_COUNT: String(config.length) };
    config.forEach(([k, v], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = k;
      env[`GIT_CONFIG_VALUE_${i}`] = v;
    });
    const ref = this.options.branch ? `refs/heads/${this.options.branch}` : 'HEAD';
    const r = await this.git(['fetch', '--quiet', '--no-tags', '--depth=1', remote, `+${ref}:${HEAD_REF}`], env);
    if (r.code !== 0) {
      const said = r.stderr.trim();
      if (/Operation too slow/.test(said)) throw new SourceError(`the repository could not be fetched: ${this.reach.silence()}`);
      // Word bounds: a port such as 40133 in curl's message is no HTTP status.
      if (/Authentication failed|\b40[13]\b|could not read Username/i.test(said)) throw new SourceError(`the repository refused the credentials: check username and password (an access token) (${said.split('\n').pop()})`);
      if (/couldn't find remote ref/i.test(said)) throw new SourceError(`the repository has no branch ${this.options.branch ?? '(its HEAD)'}`);
      throw new SourceError(`the repository could not be fetched: ${said.split('\n').slice(-2).join(' ') || `exit code ${r.code}`}`);
    }
    return (await this.ok(['rev-parse', HEAD_REF])).toString().trim();
  }

  async list(request: { cursor: string | null }): Promise<Listing> {
    const head = await this.fetchHead();
    if (request.cursor === head) return { complete: false, items: (async function* () {})(), cursor: () => head };
    const known = request.cursor !== null && (await this.git(['cat-file', '-e', `${request.cursor}^{commit}`])).code === 0;
    const items: ListedItem[] = [];
    if (known) {
      // `:old-mode new-mode old-blob new-blob status\0path\0`, one entry per changed file.
      const raw = (await this.ok(['diff-tree', '-r', '-z', '--no-renames', '--no-commit-id', request.cursor!, head])).toString('utf8').split('\0');
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const [, newMode, , newBlob, status] = raw[i]!.slice(1).split(' ');
        const path = raw[i + 1]!;
        if (status === 'D' || !FILE_MODES.has(newMode!)) items.push({ path, version: '', deleted: true });
        else items.push({ path, version: `blob:${newBlob}` });
      }
    } else {
      // `mode type blob\tpath\0` for every entry of the tree.
      for (const entry of (await this.ok(['ls-tree', '-r', '-z', '--full-tree', head])).toString('utf8').split('\0')) {
        const tab = entry.indexOf('\t');
        if (tab < 0) continue;
        const [mode, type, blob] = entry.slice(0, tab).split(' ');
        if (type === 'blob' && FILE_MODES.has(mode!)) items.push({ path: entry.slice(tab + 1), version: `blob:${blob}` });
      }
    }
    return { complete: !known, items: (async function* () { yield* items; })(), cursor: () => head };
  }

  async fetch(item: ListedItem) {
    const blob = item.version.replace(/^blob:/, '');
    // Its size first, and its bytes streamed: read whole, a blob of 200 MB (zeros, some kilobytes in the pack) was
    // held in the daemon's memory twice over before it was measured against --max-upload-mb.
    const sized = await this.git(['cat-file', '-s', blob]);
    if (sized.code !== 0) throw new ItemError(`the file's blob ${blob} is not in the fetched commit`);
    const size = Number(sized.stdout.toString().trim());
    if (size > this.maxItemBytes) throw new ItemError(`larger than ${Math.round(this.maxItemBytes / 1024 / 1024)} MiB (--max-upload-mb)`);
    return { body: this.blobBytes(blob) };
  }

  /** A blob's bytes as git writes them; an error when git fails midway. */
  private async *blobBytes(blob: string): AsyncIterable<Uint8Array> {
    const child = spawn('git', ['cat-file', 'blob', blob], { cwd: this.repo, env: this.env(), stdio: ['ignore', 'pipe', 'ignore'], signal: this.signal });
    const exited = new Promise<number | null>((resolve) => {
      child.once('error', () => resolve(-1));
      child.once('close', resolve);
    });
    try {
      yield* child.stdout as AsyncIterable<Buffer>;
      if ((await exited) !== 0) throw new ItemError(`the file's blob ${blob} could not be read from the clone`);
    } finally {
      // Left before its end (past --max-upload-mb, the pass stopped): git goes too.
      if (child.exitCode === null) child.kill();
    }
  }

  async close() {}
}

export const git: SourceKind = {
  name: 'git',
  schemes: ['git:'],
  options: Options,
  secretOptions: ['password'],
  urlCredentials: { username: 'username', password: 'password' },
  resumable: false,
  async check(url) {
    if (!['http:', 'https:', 'git:'].includes(url.protocol)) return 'a Git source is an https://, http:// or git:// URL of a repository';
    return null;
  },
  async connect(setup, env) {
    return new GitConnection(setup.url, setup.options as z.infer<typeof Options>, setup.secrets, env.scratchDir, env.reach, env.signal, env.maxItemBytes);
  },
};
