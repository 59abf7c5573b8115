import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { storageProblem } from '../store/objects/location.js';
import { databaseUrlProblem, redactDatabaseUrl } from '../store/sql/database-url.js';
import { parseSecretsKey, readSecretsKeyFile } from '../core/sealed-secret.js';
import { TWO_FACTOR_POLICIES } from '../auth/two-factor-policy.js';
import { proxyListProblem } from './trusted-proxies.js';
import { redactSmtpUrl, smtpUrlProblem } from '../mail/smtp-url.js';
import { parseByteSize } from '../core/bytes.js';
import { shownUrl } from '../core/shown-url.js';
import { embedderSpecProblem, httpUrlProblem, rerankerSpecProblem, splitSpec } from '../models/spec.js';
import { nativeOcrProblem, ocrLanguagesProblem } from '../ingest/ocr/languages.js';

/**
 * Every daemon option is declared once here. The declaration drives `docsearch serve --help`,
 * the DOCSEARCH_* environment variables, config-file keys, validation (errors name the exact
 * option and where its value came from) and docs/configuration.md.
 * Precedence: flag, then environment, then config file, then default.
 */
type Kind = 'int' | 'string' | 'bool' | 'path' | 'enum' | 'bool-or-addresses';

interface OptionDef<K extends Kind = Kind> {
  /** Flag name without dashes; also the config-file key. */
  name: string;
  kind: K;
  description: string;
  /** Shown in help and docs; `undefined` means derived (see description). */
  default?: string | number | boolean;
  choices?: readonly string[];
  min?: number;
  max?: number;
  /** Masked in logs and printed configuration: all of it (true), or the part a function masks (a URL's password). */
  secret?: boolean | ((value: string) => string);
  /**
   * A further check of a given string or path value, once every option is read: the problem (shown after the
   * option's name and source), or null. It may look at the machine (a file is there, trained data is installed),
   * so that a value that can never work stops the start before anything is opened or made; `env` because the
   * storage URL takes its endpoint and keys from AWS_*, `config` for a value that matters only with another.
   */
  check?: (value: string, context: { env: NodeJS.ProcessEnv; config: Readonly<Record<string, unknown>> }) => string | null;
  /** The environment variable, when not the one derived from the name. */
  env?: string;
  valueName?: string;
}

function originsProblem(value: string): string | null {
  for (const raw of value.split(',').map((o) => o.trim()).filter(Boolean)) {
    let url: URL | null = null;
    try {
      url = new URL(raw);
    } catch {
      url = null;
    }
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== raw.replace(/\/$/, '')) return `${shownUrl(raw)} is not an origin such as https://app.example.com`;
  }
  return null;
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** `--host`: an address or a name to bind; a URL or a host:port would only fail at bind, after the library is opened. */
function hostProblem(value: string): string | null {
  return isIP(value) !== 0 || HOST_NAME.test(value) ? null : `${JSON.stringify(value)} is not an IP address or host name (the port is --port)`;
}

/** `--public-url`: what links and OAuth redirects start with. */
function publicUrlProblem(value: string): string | null {
  const problem = httpUrlProblem(value, 'must not carry credentials: it is the address people and OAuth clients are sent to');
  if (problem) return problem;
  const url = new URL(value);
  return url.search || url.hash ? 'must have no query or fragment' : null;
}

/** A folder the daemon makes if missing (`--data-dir`, `--model-cache-dir`): it, or the nearest part of it that is there, must be a folder it can write in. */
function makeableFolderProblem(dir: string): string | null {
  let there = dir;
  while (!existsSync(there) && dirname(there) !== there) there = dirname(there);
  if (!statSync(there).isDirectory()) return `${there} is not a folder`;
  try {
    accessSync(there, constants.W_OK | constants.X_OK);
  } catch {
    return `${there} is not writable by this user`;
  }
  return null;
}

/** `--reranker onnx:<dir>`: the folder's two files, which would otherwise be missed only at the first search. */
function rerankerProblem(value: string): string | null {
  const problem = rerankerSpecProblem(value);
  const [kind, dir] = splitSpec(value.trim());
  if (problem || kind !== 'onnx') return problem;
  for (const file of ['model.onnx', 'tokenizer.json']) if (!existsSync(resolve(dir, file))) return `${resolve(dir, file)} is not there (onnx:<dir> needs model.onnx and tokenizer.json)`;
  return null;
}

/** `--secrets-key-file`: read now, so that a missing or wrong key stops the start before the library is opened. */
function secretsKeyFileProblem(path: string): string | null {
  try {
    readSecretsKeyFile(path);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The trusted sign-in headers: a name no request can carry would let no one in. */
const headerNameProblem = (value: string): string | null => (/^[!#$%&'*+.^_`|~0-9a-z-]+$/i.test(value) ? null : `${JSON.stringify(value)} is not an HTTP header name`);

/** `--sso-allowed-domains`: compared with what follows the @ of an e-mail address. */
function domainsProblem(value: string): string | null {
  // Any script's letters: a provider may give an internationalised address as it is.
  const label = '[\\p{L}\\p{N}]([\\p{L}\\p{N}-]*[\\p{L}\\p{N}])?';
  const domainName = new RegExp(`^(${label}\\.)*${label}$`, 'u');
  // Composed first: a domain pasted decomposed (a Mac's "e" + U+0301) has marks no letter class takes.
  for (const domain of value.split(',').map((d) => d.trim()).filter(Boolean)) if (!domainName.test(domain.normalize('NFC'))) return `${JSON.stringify(domain)} is not a domain such as example.com`;
  return null;
}

/** `--smtp-from`: an address, bare or after a name in angle brackets. */
const fromProblem = (value: string): string | null =>
  /^([^<>]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/.test(value.trim()) ? null : `${JSON.stringify(value)} is not an address such as docs@example.com or "Docs <docs@example.com>"`;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const DEFAULT_PORT = 7411;

export const OPTIONS = [
  { name: 'port', kind: 'int', default: DEFAULT_PORT, min: 0, max: 65535, valueName: 'n', description: 'TCP port to listen on; 0 picks any free port (the bound address is printed). A port browsers and fetch refuse (the Fetch standard\'s blocked list: 6000, 10080, …) starts with a warning: reach it through a proxy' },
  { name: 'host', kind: 'string', default: '127.0.0.1', valueName: 'addr', check: hostProblem, description: 'interface to bind; use 0.0.0.0 only behind a TLS-terminating proxy' },
  { name: 'data-dir', kind: 'path', valueName: 'dir', check: makeableFolderProblem, description: 'where the database, index and uploaded files live (default: $XDG_DATA_HOME/docsearch, else ~/.local/share/docsearch); with --database, what this replica keeps locally' },
  {
    name: 'database',
    kind: 'string',
    env: 'DOCSEARCH_DATABASE_URL',
    valueName: 'url',
    secret: redactDatabaseUrl,
    check: databaseUrlProblem,
    description:
      'PostgreSQL (15 or later) for shared mode, postgres://user:password@host:5432/db: accounts, projects, documents and the ingest queue, shared by every replica; unset: SQLite at <data-dir>/docsearch.db. The password is masked in logs; prefer the environment variable',
  },
  { name: 'public-url', kind: 'string', valueName: 'url', check: publicUrlProblem, description: 'the URL people and OAuth clients reach this server at (default: http://<host>:<port>); links in e-mail start with it' },
  {
    name: 'smtp-url',
    kind: 'string',
    valueName: 'url',
    secret: redactSmtpUrl,
    check: smtpUrlProblem,
    description:
      'send e-mail (invitations, password resets, new sign-in notices, source alerts; docs/mail.md) through this mail server: smtp://user:password@mail.example.com:587 (STARTTLS when offered) or smtps://…:465; unset: no e-mail, and admins hand out links instead. The password is masked in logs; prefer the environment variable',
  },
  { name: 'smtp-from', kind: 'string', valueName: 'address', check: fromProblem, description: 'the From of every mail, e.g. "Docs <docs@example.com>" (default: docsearch <docsearch@the public URL\'s host>)' },
  {
    name: 'mcp-allowed-origins',
    kind: 'string',
    valueName: 'origins',
    check: originsProblem,
    description:
      'browser origins (comma-separated, e.g. https://app.example.com) whose pages may call /mcp besides the public URL\'s own; a request with any other Origin header is refused (DNS-rebinding protection). Clients that are not browsers send none',
  },
  { name: 'log-level', kind: 'enum', default: 'info', choices: LOG_LEVELS, valueName: 'level', description: 'log verbosity; logs go to stdout in the --log-format' },
  {
    name: 'log-format',
    kind: 'enum',
    default: 'auto',
    choices: ['auto', 'json', 'text'],
    valueName: 'format',
    description:
      'json = one JSON object per line (docs/operations.md#logs); text = one short line per event for a person (time, level, message, e.g. "GET /api/v1/search 200 12 ms"), ' +
      'in colour on a terminal without NO_COLOR, and while no account exists without the lines of requests that did not fail (so the setup link stays in sight); ' +
      'auto = text when stdout is a terminal, json otherwise (pipes, files, journald, containers)',
  },
  {
    name: 'trust-proxy',
    kind: 'bool-or-addresses',
    default: false,
    valueName: 'addresses',
    description:
      'trust X-Forwarded-* headers from a reverse proxy (client address, https): true from any peer, or only from these addresses and CIDR ranges (comma-separated, e.g. 10.0.0.5,10.1.0.0/16), the only peers that may also send the trusted sign-in headers (--trusted-header-login)',
  },
  { name: 'proxy-hops', kind: 'int', default: 1, min: 1, max: 16, valueName: 'n', description: 'with --trust-proxy: trusted proxies in front of the daemon; the client address is the Nth X-Forwarded-For entry from the right' },
  { name: 'embedder', kind: 'string', default: 'builtin', valueName: 'spec', check: embedderSpecProblem, description: 'embedding model: builtin (= builtin:int8) | builtin:fp32 | builtin:int8 | ollama:<model> | openai:<model>' },
  { name: 'reranker', kind: 'string', default: 'none', valueName: 'spec', check: rerankerProblem, description: 'reranker: builtin | ollama:<model> | http:<url> | onnx:<dir> | none' },
  {
    name: 'rerank-timeout',
    kind: 'int',
    default: 2000,
    min: 50,
    max: 60_000,
    valueName: 'ms',
    description:
      "how long a search waits for the reranker (its scores; an onnx: or remote model's pass) before it answers in first-stage order with a warning; " +
      "the reranker's model work runs below searches' query embeddings",
  },
  {
    name: 'backfill',
    kind: 'enum',
    default: 'on',
    choices: ['on', 'off'],
    valueName: 'mode',
    description:
      'on: stored chunks that lack what this release stores beside them (answer units and their vectors, after an upgrade or a re-index) get it in the background, ' +
      'giving way to uploads and searches (docs/operations.md#upgrading); off: not now (searches choose those chunks\' answers by their terms)',
  },
  { name: 'model-cache-dir', kind: 'path', valueName: 'dir', check: makeableFolderProblem, description: 'where the built-in model graph is cached (default: <data-dir>/models)' },
  { name: 'ollama-host', kind: 'string', default: 'http://127.0.0.1:11434', valueName: 'url', check: (v) => httpUrlProblem(v, 'must not carry credentials: docsearch sends Ollama none'), description: 'Ollama server for ollama:<model> embedders and rerankers' },
  { name: 'openai-base-url', kind: 'string', default: 'https://api.openai.com', valueName: 'url', check: (v) => httpUrlProblem(v, 'must not carry credentials: give the key with --openai-api-key (DOCSEARCH_OPENAI_API_KEY)'), description: 'OpenAI-compatible server for openai:<model> (vLLM, TEI, LM Studio, llama.cpp)' },
  { name: 'openai-api-key', kind: 'string', secret: true, valueName: 'key', description: 'API key for the OpenAI-compatible server (prefer the environment variable)' },
  { name: 'reranker-api-key', kind: 'string', secret: true, valueName: 'key', description: 'API key sent to an http:<url> reranker (prefer the environment variable)' },
  { name: 'max-upload-mb', kind: 'int', default: 50, min: 1, max: 4096, valueName: 'n', description: 'largest file accepted by /api/v1/upload, in MiB' },
  {
    name: 'upload-idle-timeout',
    kind: 'int',
    default: 30,
    min: 1,
    max: 3600,
    valueName: 'seconds',
    description: 'an upload that sends nothing for this long is ended with a 400 (a stalled client would otherwise hold its connection for the 15-minute request timeout)',
  },
  { name: 'max-files', kind: 'int', default: 20, min: 1, max: 1000, valueName: 'n', description: 'most files in one upload request' },
  {
    name: 'quota-default',
    kind: 'string',
    valueName: 'size',
    check: (v) => (parseByteSize(v) === null ? `${JSON.stringify(v)} is not a size such as 500MiB or 2GB` : null),
    description:
      'the most that the live documents each account uploaded may add up to (500MiB, 2GB; a bare number is MiB); past it an upload is refused (507) and a source pauses. An admin sets an account\'s own quota, or a project\'s, in the admin API (docs/operations.md#quotas); unset: no default quota',
  },
  {
    name: 'trash-days',
    kind: 'int',
    default: 30,
    min: 0,
    max: 3650,
    valueName: 'n',
    description: 'days a deleted document stays in the trash (restorable, with its chunks and original) before it is removed for good; 0: deleting removes it at once',
  },
  { name: 'parse-timeout', kind: 'int', default: 50, min: 1, max: 3600, valueName: 'seconds', description: 'time limit for parsing one file, counted while the parse works or waits, not while it waits for a core on a busy machine (Linux; wall time elsewhere), and never more than 10 times as long in wall time (50 s leaves room to fail a hung file within a minute of its upload on a quiet machine)' },
  { name: 'ocr', kind: 'enum', default: 'auto', choices: ['auto', 'native', 'tesseract.js', 'off'], valueName: 'mode', check: (mode) => (mode === 'native' ? nativeOcrProblem() : null), description: 'OCR of PDF pages without a usable text layer (scans), offline: auto reads them with native Tesseract when it is installed (Debian: tesseract-ocr) and with tesseract.js otherwise; native or tesseract.js uses only that one; off leaves them unsearchable, with a warning on the document' },
  { name: 'ocr-languages', kind: 'string', default: 'eng', valueName: 'langs', check: (spec, { config }) => ocrLanguagesProblem(spec, String(config.ocr)), description: 'OCR languages: codes joined by "+" (deu+eng), each from its npm package @tesseract.js-data/<code> or else from the data installed for the system Tesseract (Debian: tesseract-ocr-<code>), or a folder of <code>.traineddata files; native Tesseract reads a language from its own installed data when it has it; nothing is downloaded' },
  { name: 'libreoffice', kind: 'enum', default: 'auto', choices: ['auto', 'off'], valueName: 'mode', description: 'legacy Office files (.doc, .xls, .ppt): auto converts them with LibreOffice when it is installed (Debian: libreoffice-writer-nogui, -calc-nogui, -impress-nogui), sandboxed and within --parse-timeout, and refuses them with what to install otherwise; off always refuses them' },
  {
    name: 'model-threads',
    kind: 'int',
    min: 1,
    max: 64,
    valueName: 'n',
    description:
      'threads the built-in models use for one batch (default: one per core); replicas that share a machine should split its cores between them ' +
      '(3 replicas on 2 cores: 1 each; more threads than cores cost ~12 % more CPU per passage)',
  },
  { name: 'ocr-threads', kind: 'int', min: 1, max: 64, valueName: 'n', description: 'scanned pages read at once (default: one per core; OCR runs at a lower CPU priority than searches)' },
  {
    name: 'storage',
    kind: 'string',
    valueName: 'url',
    description:
      'where the index and the uploaded originals live: unset = the data dir; s3://bucket/prefix = S3 object storage that replicas share ' +
      '(endpoint, region and keys from AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; plain http only to a loopback endpoint; ' +
      'the store must honour conditional PUT, checked at start)',
    check: (value, { env }) => storageProblem(value, env),
  },
  {
    name: 'index-retention-hours',
    kind: 'int',
    default: 1,
    min: 1,
    max: 720,
    valueName: 'n',
    description: 'with --storage s3://…: hours a superseded index version is kept for searches and writes still using it on other replicas (the data dir keeps one minute)',
  },
  {
    name: 'index-cache-mb',
    kind: 'int',
    default: 2048,
    min: 0,
    max: 1048576,
    valueName: 'n',
    description:
      "with --storage s3://…: MiB of the index's files this replica keeps on its disk: a copy of the whole index when it fits at start (<data-dir>/cache/tables), else a cache of the files searches read (<data-dir>/cache/index), so that a search reads from the store only what changed since; 0 turns both off",
  },
  {
    name: 'client-registration',
    kind: 'enum',
    default: 'open',
    choices: ['open', 'users', 'off'],
    valueName: 'policy',
    description:
      'OAuth clients that register themselves (MCP clients): open = anyone may register (RFC 7591 at /api/oauth/register) or use a client ID metadata document URL as client_id; ' +
      'users = registering needs an API key or access token of an account here (the client is then that account\'s alone), metadata documents still accepted; off = neither. ' +
      'Registering grants nothing by itself: every grant still needs a signed-in user\'s consent, and the consent page says the client registered itself',
  },
  {
    name: 'client-metadata-allow-private',
    kind: 'bool',
    default: false,
    description: 'let client ID metadata documents be fetched from loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7) and CGNAT addresses; link-local (169.254/16) and other special addresses are never fetched',
  },
  {
    name: 'metrics',
    kind: 'enum',
    default: 'auto',
    choices: ['auto', 'on', 'off'],
    valueName: 'mode',
    description:
      'GET /metrics for Prometheus (docs/operations.md): auto = served without credentials only while the daemon is bound to a loopback address, ' +
      'without --trust-proxy or a --public-url on another host, to requests that name a loopback Host and came through no proxy (no X-Forwarded-For, Forwarded, Via or similar header), and not at all otherwise; ' +
      'on = served to whoever reaches the port; off = never. With --metrics-token set, auto and on both require it',
  },
  {
    name: 'metrics-token',
    kind: 'string',
    secret: true,
    valueName: 'token',
    check: (value) => (value.length >= 16 && /^[\x21-\x7e]+$/.test(value) ? null : 'must be at least 16 printable characters without spaces (e.g. `openssl rand -hex 32`)'),
    description: 'bearer token Prometheus must send to read /metrics (Authorization: Bearer <token>; scrape_config authorization.credentials_file); required to serve them on a non-loopback bind with --metrics auto. Prefer the environment variable',
  },
  {
    name: 'replica-poll',
    kind: 'int',
    default: 30,
    min: 1,
    max: 3600,
    valueName: 'seconds',
    description:
      'with --database (replicas): how often an idle replica looks for jobs another replica queued, and an upload waiting with ?wait=true for a document another replica finished, when no announcement (PostgreSQL LISTEN/NOTIFY) reaches it, e.g. behind a pooler in transaction mode; the waiting upload looks six times as often (every 5 s by default)',
  },
  {
    name: 'job-lease',
    kind: 'int',
    default: 120,
    min: 10,
    max: 3600,
    valueName: 'seconds',
    description:
      'how long a hold on an ingest job lasts unless renewed (every eighth of it, while the job runs); with --database (replicas), the jobs of a replica that died pass to the others after this long, and the index upkeep it held within a quarter of it. Shorter recovers sooner, but a process stalled for three quarters of it gives its jobs up',
  },
  {
    name: 'replaced-grace',
    kind: 'int',
    default: 15,
    min: 1,
    max: 3600,
    valueName: 'seconds',
    description:
      'how long a version a newer upload (or a source) replaced at its path is kept, hidden, before it is deleted: a search that began before the swap still reads its chunks. Searches take a few seconds at most',
  },
  {
    name: 'retry-base',
    kind: 'int',
    default: 5,
    min: 1,
    max: 3600,
    valueName: 'seconds',
    description:
      'the wait before a document whose processing failed in a way that may go away (a model server down, a write that failed) is tried again; each later wait doubles, up to 10 minutes, and the fifth failure is final',
  },
  { name: 'ingest-workers', kind: 'int', default: 8, min: 1, max: 16, valueName: 'n', description: 'documents processed at once (they share embedding batches and writes)' },
  {
    name: 'secrets-key-file',
    kind: 'path',
    valueName: 'file',
    check: secretsKeyFileProblem,
    description:
      'a file holding the secrets key (32 bytes as 64 hex or 43 base64url characters: `openssl rand -hex 32 > key; chmod 600 key`) that seals the credentials of sources (docs/sources.md) and authenticator-app secrets at rest: the file form of --secrets-key. Every replica needs the same key, and a restored library the key its secrets were sealed with',
  },
  {
    name: 'source-roots',
    kind: 'string',
    valueName: 'dirs',
    check: rootsProblem,
    description: 'folders on this machine (absolute paths, comma-separated) that `folder` sources may be in, e.g. /srv/docs,/mnt/share; unset: no folder sources',
  },
  {
    name: 'sources-allow-private',
    kind: 'bool',
    default: false,
    description:
      'let sources connect to loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7) and CGNAT addresses: intranet sites, a NAS, a mail server on the LAN; link-local (169.254/16) and other special addresses never',
  },
  { name: 'sources-delete-guard-percent', kind: 'int', default: 10, min: 0, max: 100, valueName: 'n', description: 'a source pass that would delete more than this share (%) of its documents, and more than --sources-delete-guard-count of them, pauses the source until an owner confirms' },
  { name: 'sources-delete-guard-count', kind: 'int', default: 5, min: 0, max: 1000000, valueName: 'n', description: 'see --sources-delete-guard-percent' },
  {
    name: 'source-timeout',
    kind: 'int',
    default: 60,
    min: 1,
    max: 3600,
    valueName: 'seconds',
    description: 'how long a source\'s server may stay silent during a request (WebDAV, S3, web site, IMAP, git over http) before the pass fails with an error saying so; the source is tried again at its next run',
  },
  { name: 'sources-min-interval', kind: 'int', default: 60, min: 1, max: 86400, valueName: 'seconds', description: 'the shortest schedule (`every`) a source may have' },
  {
    name: 'require-2fa',
    kind: 'enum',
    default: 'off',
    choices: TWO_FACTOR_POLICIES,
    valueName: 'who',
    description:
      'accounts that must sign in with a second factor (an authenticator app or a passkey, docs/security.md): off = those who set one up; admins = admins too, sent to set one up at their next page; all = everyone. ' +
      'Until they have one, such an account reaches only Settings → Security and mints no API key or OAuth grant',
  },
  {
    name: 'secrets-key',
    kind: 'string',
    secret: true,
    valueName: 'key',
    check: (value) => (parseSecretsKey(value) ? null : 'must be 32 bytes as 43 base64url or 64 hex characters (e.g. `openssl rand -hex 32`)'),
    description:
      'the key that seals authenticator-app secrets in the database (default: <data-dir>/secrets.key, made at first start). Replicas of one library must share it; backups carry the default one wrapped under the backup key, and restore and migrate put it in place, but one given here is yours to keep and move. Prefer the environment variable',
  },
  {
    name: 'audit-retention-days',
    kind: 'int',
    default: 365,
    min: 0,
    max: 36500,
    valueName: 'n',
    description: 'days the audit log keeps an event (docs/operations.md#audit-log); older ones are removed at start and hourly. 0 keeps them for ever',
  },
  {
    name: 'oidc-issuer',
    kind: 'string',
    valueName: 'url',
    check: issuerProblem,
    description:
      'sign in with an OpenID Connect provider (docs/sso.md): its issuer, an https URL (discovery reads <issuer>/.well-known/openid-configuration); a private or loopback address is fine, and a private CA is trusted through NODE_EXTRA_CA_CERTS',
  },
  { name: 'oidc-client-id', kind: 'string', valueName: 'id', description: 'the client ID docsearch is registered under at the provider; its redirect URI there is <public-url>/login/sso/callback' },
  { name: 'oidc-client-secret', kind: 'string', secret: true, valueName: 'secret', description: 'the client secret (sent as client_secret_basic, or client_secret_post where the provider offers only that); unset: a public client, with PKCE only. Prefer the environment variable' },
  { name: 'oidc-scopes', kind: 'string', default: 'openid email profile', valueName: 'scopes', check: (v) => (v.split(/\s+/).includes('openid') ? null : 'must include openid'), description: 'the scopes asked for (space-separated); add the one that brings the groups claim where the provider needs one (groups)' },
  { name: 'oidc-groups-claim', kind: 'string', default: 'groups', valueName: 'claim', description: 'the claim (in the ID token or from userinfo) that lists the person\'s groups; a dotted path reaches into an object (realm_access.roles)' },
  { name: 'sso-name', kind: 'string', valueName: 'name', description: 'what the identity provider is called on the "Sign in with …" button and on the groups it brings (default: the issuer\'s host; with trusted-header sign-in alone, "the sign-in proxy")' },
  { name: 'sso-allowed-domains', kind: 'string', valueName: 'domains', check: domainsProblem, description: 'e-mail domains (comma-separated) whose people get an account at their first sign-in through the provider, with a verified e-mail; unset: anyone the provider signs in' },
  { name: 'sso-required-group', kind: 'string', valueName: 'group', description: 'a provider group a person must be in to sign in through the provider (checked at every sign-in)' },
  { name: 'sso-admin-group', kind: 'string', valueName: 'group', description: 'the provider group whose members are admins here; set at every sign-in through the provider' },
  {
    name: 'sso-mfa-acr',
    kind: 'string',
    valueName: 'values',
    description:
      "`acr` values (comma-separated, each provider's own names) that say the provider asked more than one factor: a sign-in bringing one counts as a second factor for --require-2fa, as an `amr` naming mfa does; unset: acr is not read",
  },
  { name: 'sso-link-accounts', kind: 'bool', default: false, description: 'let a first sign-in through the provider take over the local account with the same e-mail, when the provider says the e-mail is verified; off: such a sign-in is refused' },
  {
    name: 'sso-recheck',
    kind: 'int',
    default: 900,
    min: 0,
    valueName: 'seconds',
    description:
      'how often (seconds) a web session signed in through the OpenID Connect provider asks it again (refresh token, else userinfo) whether the person may still be here, and takes their groups and admin flag anew: a session the provider ended, or a person it no longer lets in, ends at the next page after this. 0: never (sessions then last their 7 days, or until a back-channel logout)',
  },
  { name: 'password-login', kind: 'enum', default: 'on', choices: ['on', 'off'], valueName: 'mode', description: 'off: the login page offers the identity provider alone (needs --oidc-issuer or --trusted-header-login); `docsearch users set-password` still sets passwords, for when it is turned on again' },
  { name: 'trusted-header-login', kind: 'bool', default: false, description: 'sign people in to the web pages by the headers a forward-auth proxy (Authelia, Authentik, oauth2-proxy) sets, accepted only from the --trust-proxy addresses; the API keeps its bearer credentials' },
  { name: 'trusted-header-user', kind: 'string', default: 'Remote-User', valueName: 'header', check: headerNameProblem, description: 'with --trusted-header-login: the header naming the signed-in person (their stable user name at the proxy)' },
  { name: 'trusted-header-email', kind: 'string', default: 'Remote-Email', valueName: 'header', check: headerNameProblem, description: 'with --trusted-header-login: the header with their e-mail (without it, a user header that is an e-mail address is used)' },
  { name: 'trusted-header-groups', kind: 'string', default: 'Remote-Groups', valueName: 'header', check: headerNameProblem, description: 'with --trusted-header-login: the header listing their groups, separated by commas or |' },
] as const satisfies readonly OptionDef[];

/** `--oidc-issuer`: an https URL without query or fragment. */
function issuerProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${shownUrl(value)} is not a URL`;
  }
  if (url.protocol !== 'https:') return 'must be an https URL (the provider signs people in: its answers must not travel in the clear)';
  if (url.username || url.password) return 'must not carry credentials (the client secret is --oidc-client-secret)';
  if (url.search || url.hash) return 'must have no query or fragment';
  return null;
}

/**
 * Options that only make sense together, checked once all are read: a sign-in that cannot work stops the start
 * with what to set.
 */
function combinationProblem(c: ServeConfig, sourceOf: (name: string) => string | undefined): string | null {
  if (c.secretsKey && c.secretsKeyFile) return `--secrets-key (from ${sourceOf('secrets-key')}) and --secrets-key-file (from ${sourceOf('secrets-key-file')}) both give the secrets key: give one`;
  if (c.oidcIssuer && !c.oidcClientId) return '--oidc-issuer needs --oidc-client-id (the client docsearch is registered as at the provider)';
  if (!c.oidcIssuer && c.oidcClientId) return '--oidc-client-id needs --oidc-issuer';
  if (c.passwordLogin === 'off' && !c.oidcIssuer && !c.trustedHeaderLogin) return '--password-login off needs another way to sign in: --oidc-issuer or --trusted-header-login';
  if (c.trustedHeaderLogin && typeof c.trustProxy !== 'string') {
    return '--trusted-header-login needs --trust-proxy to list the proxy\'s addresses (e.g. --trust-proxy 10.0.0.5), so that no one else can send the sign-in headers';
  }
  return null;
}

/**
 * `--source-roots`: absolute paths, comma-separated, none of them a file. One not there yet is let be: a share
 * mounted after the daemon starts at boot would otherwise stop it for good (exit 2 is not restarted), and a pass
 * over a share not mounted removes nothing (the deletion guard, docs/sources.md).
 */
function rootsProblem(value: string): string | null {
  for (const dir of value.split(',').map((d) => d.trim()).filter(Boolean)) {
    if (!isAbsolute(dir)) return `${JSON.stringify(dir)} is not an absolute path`;
    if (existsSync(dir) && !statSync(dir).isDirectory()) return `${dir} is not a folder`;
  }
  return null;
}

/** `--source-roots` as a list. */
export const sourceRoots = (config: Pick<ServeConfig, 'sourceRoots'>): string[] => (config.sourceRoots ?? '').split(',').map((d) => d.trim()).filter(Boolean);

type Def = (typeof OPTIONS)[number];
type ValueOf<D extends Def> = D['kind'] extends 'int' ? number : D['kind'] extends 'bool' ? boolean : D['kind'] extends 'bool-or-addresses' ? boolean | string : string;
type CamelCase<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<CamelCase<T>>}` : S;

export type ServeConfig = {
  [D in Def as CamelCase<D['name']>]: D extends { default: unknown } ? ValueOf<D> : ValueOf<D> | undefined;
} & { dataDir: string; modelCacheDir: string };

/** The option's environment variable: DOCSEARCH_<NAME>, unless it declares its own. */
export const envName = (def: Pick<OptionDef, 'name' | 'env'>): string => def.env ?? `DOCSEARCH_${def.name.toUpperCase().replaceAll('-', '_')}`;
const camel = (name: string): string => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function defaultDataDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return join(base, 'docsearch');
}

export function defaultConfigFile(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'docsearch', 'config.json');
}

function coerce(def: OptionDef, raw: unknown, source: string): string | number | boolean {
  const where = optionWhere(def, source);
  switch (def.kind) {
    case 'int': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      if (!Number.isInteger(n)) throw new ConfigError(`${where} must be an integer, got ${JSON.stringify(raw)}`);
      if ((def.min !== undefined && n < def.min) || (def.max !== undefined && n > def.max))
        throw new ConfigError(`${where} must be between ${def.min} and ${def.max}, got ${n}`);
      return n;
    }
    case 'bool':
    case 'bool-or-addresses': {
      if (typeof raw === 'boolean') return raw;
      const s = String(raw).toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(s)) return true;
      if (['0', 'false', 'no', 'off'].includes(s)) return false;
      if (def.kind === 'bool') throw new ConfigError(`${where} must be true or false, got ${JSON.stringify(raw)}`);
      const problem = proxyListProblem(String(raw));
      if (problem) throw new ConfigError(`${where} must be true, false or a list of addresses: ${problem}`);
      return String(raw).trim();
    }
    case 'enum': {
      const s = String(raw);
      if (!def.choices?.includes(s)) throw new ConfigError(`${where} must be one of ${def.choices?.join(', ')}, got ${JSON.stringify(raw)}`);
      return s;
    }
    case 'path':
      if (typeof raw !== 'string' || raw === '') throw new ConfigError(`${where} must be a path`);
      return resolve(raw);
    case 'string': {
      if (typeof raw !== 'string') throw new ConfigError(`${where} must be a string`);
      return raw;
    }
  }
}

const optionWhere = (def: OptionDef, source: string): string => `option "${def.name}" (from ${source})`;

const LEGACY_CLIENT_KEYS = new Set(['default_server']);

function readConfigFile(path: string, explicit: boolean): Record<string, unknown> {
  if (!existsSync(path)) {
    if (explicit) throw new ConfigError(`config file ${path} does not exist`);
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError(`config file ${path} must hold a JSON object`);
  const known = new Set<string>(OPTIONS.map((o) => o.name));
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed)) {
    // Written here by CLIs up to 0.1 (`docsearch login`); the CLI now keeps it in client.json and moves it there.
    if (LEGACY_CLIENT_KEYS.has(key)) continue;
    if (!known.has(key)) throw new ConfigError(`config file ${path}: unknown option "${key}" (known: ${[...known].join(', ')})`);
    options[key] = value;
  }
  return options;
}

/**
 * Resolves the daemon configuration. `flags` holds values given on the command line, keyed by
 * option name (commander's camelCase keys are accepted too); `configFile` is --config.
 */
export function resolveConfig(flags: Record<string, unknown>, env: NodeJS.ProcessEnv, configFile?: string): ServeConfig {
  const filePath = configFile ?? env.DOCSEARCH_CONFIG;
  const file = readConfigFile(filePath ? resolve(filePath) : defaultConfigFile(env), filePath !== undefined);
  const out: Record<string, unknown> = {};
  const sources = new Map<string, string>();
  for (const def of OPTIONS as readonly OptionDef[]) {
    const flag = flags[def.name] ?? flags[camel(def.name)];
    const fromEnv = env[envName(def)];
    const source = flag !== undefined ? `--${def.name}` : fromEnv !== undefined && fromEnv !== '' ? envName(def) : file[def.name] !== undefined ? 'config file' : undefined;
    out[camel(def.name)] = source === undefined ? def.default : coerce(def, flag ?? (source === 'config file' ? file[def.name] : fromEnv), source);
    if (source !== undefined) sources.set(def.name, source);
  }
  // Checked once all are read: some look at another option (OCR languages matter only with OCR on).
  for (const def of OPTIONS as readonly OptionDef[]) {
    const source = sources.get(def.name);
    const problem = source === undefined ? null : def.check?.(String(out[camel(def.name)]), { env, config: out });
    if (source && problem) throw new ConfigError(`${optionWhere(def, source)}: ${problem}`);
  }
  out.dataDir ??= defaultDataDir(env);
  out.modelCacheDir ??= join(out.dataDir as string, 'models');
  const problem = combinationProblem(out as ServeConfig, (name) => sources.get(name));
  if (problem) throw new ConfigError(problem);
  return out as ServeConfig;
}

/** The configuration with secrets masked, for logs and `--print-config`. */
export function redactConfig(config: ServeConfig): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const def of OPTIONS as readonly OptionDef[]) {
    const key = camel(def.name);
    const value = out[key];
    if (!def.secret || value === undefined) continue;
    out[key] = typeof def.secret === 'function' ? def.secret(String(value)) : '[redacted]';
  }
  return out;
}

export interface OptionHelp {
  flag: string;
  env: string;
  description: string;
  defaultText: string | undefined;
  kind: Kind;
}

/** Help rows for commander and docs/configuration.md. */
export function optionHelp(): OptionHelp[] {
  return (OPTIONS as readonly OptionDef[]).map((def) => ({
    flag: def.kind === 'bool' ? `--${def.name} [bool]` : def.kind === 'bool-or-addresses' ? `--${def.name} [${def.valueName}]` : `--${def.name} <${def.valueName ?? 'value'}>`,
    env: envName(def),
    description: def.description,
    defaultText: def.default === undefined ? undefined : String(def.default),
    kind: def.kind,
  }));
}
