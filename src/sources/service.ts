/**
 * Sources as their owners manage them: adding one (its kind, URL, schedule and options checked, its credentials
 * sealed under the operator's key), changing, pausing and resuming, asking for a pass now, and removing one with
 * or without its documents. Who may do this with a project is the caller's decision (server/api/sources/access.ts).
 */
import type { AuditLog } from '../core/audit.js';
import { newId } from '../core/ids.js';
import { AppError, invalidRequest, notFound } from '../core/errors.js';
import type { SecretSealer } from '../core/sealed-secret.js';
import type { DocumentService } from '../documents/lifecycle.js';
import type { Events } from '../store/coordination.js';
import type { DocumentStore } from '../store/sql/documents.js';
import type { OtherItem, SourcePatch, SourceRecord, SourceStore } from '../store/sql/sources.js';
import { DEFAULT_EVERY, formatEvery, MAX_EVERY_MS, parseEvery } from './every.js';
import { KIND_NAMES, type KindName, type SourceKind, type SourceSetup, SourceError } from './kind.js';
import { KINDS, kindOfUrl } from './kinds/index.js';
import { neverReachable, portOf, type Reach } from './reach.js';
import { handOver } from './sync.js';

export interface SourceServiceDeps {
  store: SourceStore;
  documents: DocumentStore;
  ingest: DocumentService;
  events: Events;
  /** The library's secrets key (server/secrets-key.ts): source credentials are sealed under it, bound to the source's id. */
  sealer: SecretSealer;
  /** `--source-roots`. */
  roots: readonly string[];
  /** The server's own folders (its data directory, its secrets key file): no folder source may be, hold or lie in one. */
  hidden: readonly string[];
  /** The shortest schedule allowed (`--sources-min-interval`). */
  minEveryMs: number;
  /** Where sources may connect: a source aimed at the daemon itself is refused when it is added. */
  reach: Reach;
  /** Who added, changed, confirmed or removed which source (never a credential: only which ones changed). */
  audit: AuditLog;
}

const sourceTarget = (source: Pick<SourceRecord, 'id' | 'url'>) => ({ type: 'source', id: source.id, label: source.url });

export interface NewSourceInput {
  kind?: string | undefined;
  url: string;
  every?: string | undefined;
  options?: Record<string, unknown> | undefined;
  /** Label names for every document it brings. */
  labels?: string[] | undefined;
}

export interface SourcePatchInput {
  every?: string | undefined;
  options?: Record<string, unknown> | undefined;
  status?: 'active' | 'paused' | undefined;
  labels?: string[] | undefined;
}

export class SourceService {
  constructor(private readonly deps: SourceServiceDeps) {}

  /** What this server allows: the folders a folder source may be under, and the shortest schedule (for forms). */
  policy(): { roots: readonly string[]; minEveryMs: number } {
    return { roots: this.deps.roots, minEveryMs: this.deps.minEveryMs };
  }

  kind(source: Pick<SourceRecord, 'kind'>): SourceKind {
    const kind = KINDS[source.kind as KindName];
    if (!kind) throw new SourceError(`this server does not know sources of kind ${source.kind}`);
    return kind;
  }

  /** A source's URL, options and credentials as its kind takes them; SourceError when its credentials cannot be opened. */
  setup(source: SourceRecord): SourceSetup {
    let secrets: Record<string, string> = {};
    if (source.sealedSecrets !== null) {
      const opened = this.deps.sealer.open(source.sealedSecrets, source.id);
      // The library refuses to start with another key while anything is sealed (server/secrets-key.ts): a value
      // that does not open was changed in the database.
      if (opened === null) throw new SourceError(`its credentials cannot be read (they were sealed under another secrets key, or changed): enter them again (${this.kind(source).secretOptions.join(', ') || 'its credentials'})`);
      secrets = JSON.parse(opened) as Record<string, string>;
    }
    return { url: new URL(source.url), options: source.options, secrets };
  }

  /**
   * The secret options to enter again: every one its kind takes when those sealed cannot be opened (the library's
   * secrets key was replaced or reset); none while they can.
   */
  secretsToReenter(source: SourceRecord): string[] {
    return this.secretsUnreadable(source) ? [...this.kind(source).secretOptions] : [];
  }

  /** Names of the secret options a source has (shown instead of their values). */
  secretNames(source: SourceRecord): string[] {
    if (source.sealedSecrets === null) return [];
    try {
      return Object.keys(this.setup(source).secrets).sort();
    } catch {
      return [];
    }
  }

  /** A new source of `project`, added by `project.userId` (the uploader of its documents). */
  async create(project: { id: string; userId: string }, input: NewSourceInput): Promise<SourceRecord> {
    const url = parseUrl(input.url);
    const kindName = input.kind ?? kindOfUrl(url);
    if (!kindName) throw invalidRequest(`url: ${url.protocol} URLs name no kind of source; give kind (${KIND_NAMES.join(', ')})`);
    const kind = KINDS[kindName as KindName];
    if (!kind) throw invalidRequest(`kind: must be one of ${Object.keys(KINDS).join(', ')}`);
    const options = { ...input.options };
    if (url.username || url.password) {
      if (!kind.urlCredentials) throw invalidRequest(`url: a ${kind.name} source takes no credentials in its URL`);
      if (url.username) options[kind.urlCredentials.username] ??= credential(url.username, 'user name');
      if (url.password) options[kind.urlCredentials.password] ??= credential(url.password, 'password');
      url.username = '';
      url.password = '';
    }
    const problem = await kind.check(url, this.deps.roots, this.deps.hidden);
    if (problem) throw invalidRequest(`url: ${problem}`);
    const { plain, secrets } = this.splitOptions(kind, options);
    await refuseUnreachable(url, plain, this.deps.reach);
    const id = newId('src');
    const source = await this.deps.store.create({
      id,
      projectId: project.id,
      userId: project.userId,
      kind: kind.name,
      url: url.href,
      everyMs: this.every(input.every ?? DEFAULT_EVERY),
      options: plain,
      sealedSecrets: this.seal(secrets, id),
      ...(input.labels ? { labels: input.labels } : {}),
    });
    await this.deps.audit.record({
      type: 'source.created',
      target: sourceTarget(source),
      details: { project: project.id, kind: source.kind, every: formatEvery(source.everyMs), options: plain, secrets: Object.keys(secrets).sort() },
    });
    await this.announce(source.id);
    return source;
  }

  /** Every source of the library with its project (for admins: their state, not their documents). */
  listAll() {
    return this.deps.store.listAll();
  }

  async list(projectId: string): Promise<SourceRecord[]> {
    return this.deps.store.listInProject(projectId);
  }

  async get(projectId: string, id: string): Promise<SourceRecord> {
    const source = await this.deps.store.get(projectId, id);
    if (!source) throw notFound('source');
    return source;
  }

  /**
   * New options replace the old ones; a secret option not given keeps its value (they are never shown, so a
   * client cannot send them back). Resuming a paused source confirms the deletions it paused for.
   */
  async update(projectId: string, id: string, input: SourcePatchInput): Promise<SourceRecord> {
    const source = await this.get(projectId, id);
    const kind = this.kind(source);
    const patch: SourcePatch = {};
    const changed: Record<string, unknown> = {};
    if (input.every !== undefined) {
      patch.everyMs = this.every(input.every);
      if (patch.everyMs !== source.everyMs) changed.every = formatEvery(patch.everyMs);
    }
    if (input.options !== undefined) {
      // Credentials that cannot be opened (the key was reset) are re-entered, not kept.
      const kept = this.keptSecrets(source);
      const { plain, secrets } = this.splitOptions(kind, { ...kept, ...input.options });
      patch.options = plain;
      if (JSON.stringify(plain) !== JSON.stringify(source.options)) changed.options = plain;
      if (JSON.stringify(secrets) !== JSON.stringify(kept) || (source.sealedSecrets !== null && this.secretsUnreadable(source))) {
        patch.sealedSecrets = this.seal(secrets, id);
        changed.credentials = Object.keys(secrets)
          .filter((k) => secrets[k] !== kept[k])
          .sort();
      }
    }
    if (input.status !== undefined) {
      patch.status = input.status;
      if (input.status === 'paused' && source.status !== 'paused') changed.status = 'paused';
      if (input.status === 'active' && (source.status === 'paused' || source.heldDeletions !== null)) Object.assign(changed, { status: 'active', deletions_confirmed: true });
    }
    if (input.labels !== undefined) {
      patch.labels = input.labels;
      if (JSON.stringify(input.labels) !== JSON.stringify(source.labels)) changed.labels = input.labels;
    }
    const updated = await this.deps.store.update(id, patch);
    if (!updated) throw notFound('source');
    if (Object.keys(changed).length > 0) await this.deps.audit.record({ type: 'source.changed', target: sourceTarget(source), details: { project: projectId, ...changed } });
    await this.announce(id);
    return updated;
  }

  /** The secret options as they are sealed; none when they cannot be opened (another key: they are re-entered). */
  private keptSecrets(source: SourceRecord): Record<string, string> {
    try {
      return this.setup(source).secrets;
    } catch (err) {
      if (err instanceof SourceError) return {};
      throw err;
    }
  }

  private secretsUnreadable(source: SourceRecord): boolean {
    return source.sealedSecrets !== null && this.deps.sealer.open(source.sealedSecrets, source.id) === null;
  }

  /** Items of a source whose last fetch failed. */
  itemErrors(id: string, limit: number) {
    return this.deps.store.itemErrors(id, limit);
  }

  /** A pass now (after the running one, if any); `confirm` lets through once the deletions a paused source held back. */
  async sync(projectId: string, id: string, confirm: boolean): Promise<SourceRecord> {
    const source = await this.get(projectId, id);
    if (source.status === 'paused' && !confirm) {
      throw new AppError('conflict', `the source is paused: ${source.pausedReason ?? 'by its owner'}. Sync it with confirm to resume it`);
    }
    const updated = await this.deps.store.requestSync(id, confirm);
    if (confirm && (source.status === 'paused' || source.heldDeletions !== null)) {
      await this.deps.audit.record({ type: 'source.changed', target: sourceTarget(source), details: { project: projectId, status: 'active', deletions_confirmed: true } });
    }
    await this.announce(id);
    return updated ?? source;
  }

  /**
   * Removes a source; its documents go with it unless `keepDocuments`, which leaves them as uploads. One another
   * source of the project lists too (the same bytes) goes to that source instead, either way (handOver).
   */
  async remove(projectId: string, id: string, keepDocuments: boolean): Promise<void> {
    const source = await this.get(projectId, id);
    const documents = await this.deps.documents.ofSource(id);
    // Handed over while the source's items are still recorded (its removal deletes them), so none is lost to a
    // pass of the other source in between.
    // One statement asks which another source lists, and where each goes; only those are looked at one by one.
    const elsewhere = documents.length > 0 ? await this.deps.store.otherItemsOf(projectId, id, documents.map((d) => d.id)) : new Map<string, OtherItem>();
    const left: typeof documents = [];
    for (const { id: docId, userId } of documents) {
      const other = elsewhere.get(docId);
      const doc = other ? await this.deps.documents.get(docId) : null;
      if (doc === null || doc.sourceId !== id || !(await handOver(source, doc, this.deps, other))) left.push({ id: docId, userId });
    }
    await this.deps.store.delete(id);
    const handedOver = documents.length - left.length;
    await this.deps.audit.record({
      type: 'source.removed',
      target: sourceTarget(source),
      details: { project: projectId, documents: documents.length, kept_documents: keepDocuments, ...(handedOver > 0 ? { handed_over: handedOver } : {}) },
    });
    if (keepDocuments) return this.deps.documents.detachSource(id);
    for (const doc of left) await this.deps.ingest.delete(doc);
  }

  private every(text: string): number {
    const ms = parseEvery(text);
    if (ms === null) throw invalidRequest('every: a duration such as "15m", "1h" or "1d"');
    if (ms < this.deps.minEveryMs) throw invalidRequest(`every: at least ${formatEvery(this.deps.minEveryMs)} on this server`);
    if (ms > MAX_EVERY_MS) throw invalidRequest(`every: at most ${formatEvery(MAX_EVERY_MS)}`);
    return ms;
  }

  /** The kind's options checked, and its secret ones set apart. */
  private splitOptions(kind: SourceKind, options: Record<string, unknown>): { plain: Record<string, unknown>; secrets: Record<string, string> } {
    const parsed = kind.options.safeParse(options);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = ['options', ...issue.path.map(String)].join('.');
      throw invalidRequest(`${where}: ${issue.message}`);
    }
    const plain: Record<string, unknown> = {};
    const secrets: Record<string, string> = {};
    for (const [k, v] of Object.entries(parsed.data)) {
      if (v === undefined) continue;
      if (kind.secretOptions.includes(k)) secrets[k] = String(v);
      else plain[k] = v;
    }
    return { plain, secrets };
  }

  private seal(secrets: Record<string, string>, id: string): string | null {
    if (Object.keys(secrets).length === 0) return null;
    return this.deps.sealer.seal(JSON.stringify(secrets), id);
  }

  private async announce(id: string): Promise<void> {
    await this.deps.events.publish('sources', id).catch(() => undefined);
  }
}

/**
 * A source aimed where none may connect (cloud metadata, link-local) or at the daemon itself: refused when it is
 * added (reach.ts), as each of its connections is later.
 */
async function refuseUnreachable(url: URL, options: Record<string, unknown>, reach: Reach): Promise<void> {
  const hosts: [string, URL][] = [];
  // An s3:// URL names a bucket, not a host: its endpoint option is where it connects.
  if (url.protocol !== 'file:' && url.protocol !== 's3:' && url.hostname) hosts.push(['url', url]);
  if (typeof options.endpoint === 'string') hosts.push(['options.endpoint', new URL(options.endpoint)]);
  for (const [where, at] of hosts) {
    const why = (await neverReachable(at.hostname)) ?? (await reach.itself(at.hostname, portOf(at)));
    if (why) throw invalidRequest(`${where}: ${why}`);
  }
}

/** A user name or password of a URL, decoded; one that does not decode (`%E9`, `%ZZ`) is refused, never echoed. */
function credential(encoded: string, what: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw invalidRequest(`url: its ${what} is not valid percent-encoding (UTF-8, each % followed by two hex digits)`);
  }
}

function parseUrl(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw invalidRequest('url: not a URL (a folder is file:///path/to/folder)');
  }
}
