import type { AuditLog } from '../../core/audit.js';
import type { Clock } from '../../core/clock.js';
import { AppError, invalidRequest, notFound } from '../../core/errors.js';
import { codePointCount } from '../../core/code-points.js';
import { newId } from '../../core/ids.js';
import { MAX_NAME_CHARS } from '../../core/name-limits.js';
import { bytesProblem } from '../../core/storable-text.js';
import { randomBase62, safeEqual, sha256Hex } from '../../core/secrets.js';
import type { ClientRegistrationKind, OAuthClientRecord, OAuthClientStore } from '../../store/sql/oauth-clients.js';
import { type ClientMetadataFetcher, MetadataFetchError } from './client-metadata-fetch.js';
import { type ClientMetadata, ClientMetadataProblem, displayName, MAX_REDIRECT_URIS, readClientMetadata } from './client-metadata.js';
import { InvalidClient, TooManyRequests } from './errors.js';
import type { RegistrationPolicy } from './metadata.js';
import { redirectUriProblem } from './redirect-uri.js';
import { unsafeTextProblem } from '../../core/unsafe-text.js';

const SECRET_PREFIX = 'dscs_';

export interface RegisteredClient {
  client: OAuthClientRecord;
  /** The client secret, returned once (null for public clients); only its SHA-256 is stored. */
  secret: string | null;
}

export interface ClientRegistration {
  name: string;
  redirectUris: string[];
  isPublic?: boolean;
  /** The registering user; null for operator-registered clients (`docsearch clients add`). */
  userId: string | null;
  /** Self-registration (RFC 7591): 'dynamic'; default: the operator's or the user's by userId. */
  registration?: ClientRegistrationKind;
  clientUri?: string | null;
  loopbackAnyPort?: boolean;
}

/**
 * How self-registered clients are received: the operator's policy, the fetcher of metadata documents, and the
 * per-address registration rate limit (0, or the milliseconds to wait) that fetching an unrecorded document counts on.
 */
export interface SelfRegistration {
  policy: RegistrationPolicy;
  documents: ClientMetadataFetcher | null;
  takeSlot: (clientIp: string) => Promise<number>;
}

/**
 * Dynamically registered clients that may wait for their first use at once: registering one more deletes the oldest
 * that never got a code or a grant, so a flood from many addresses (each within the rate limit) stays bounded.
 */
export const MAX_UNUSED_DYNAMIC_CLIENTS = 1000;

export const SELF_REGISTRATION_OFF = 'this server does not accept self-registered clients; ask its operator to register the application';

/** A client_id that names a client ID metadata document: a URL (only https ones are accepted, see metadataDocumentUrl). */
export const isMetadataDocumentClientId = (id: string): boolean => /^https?:\/\//i.test(id);

/** The document's URL, or invalid_client saying why this client_id cannot be one (the draft's §3 rules). */
function metadataDocumentUrl(id: string): URL {
  const refuse = (why: string) => new InvalidClient(`client_id ${id} is not a usable client metadata document URL: ${why}`);
  // Bytes, not characters: the id keys the client's row and is in the grants' and codes' indexes (~2,704 bytes each on PostgreSQL).
  const tooLong = bytesProblem(id, 2000);
  if (tooLong) throw refuse(`it ${tooLong}`);
  let url: URL;
  try {
    url = new URL(id);
  } catch {
    throw refuse('it is not a valid URL');
  }
  if (url.protocol !== 'https:') throw refuse('it must use https');
  if (url.username || url.password) throw refuse('it must not contain user information');
  if (id.includes('#')) throw refuse('it must not contain a fragment');
  if (url.pathname === '/' || url.pathname === '') throw refuse('it must have a path');
  return url;
}

const newSecret = () => SECRET_PREFIX + randomBase62(43);

/** Registered applications: registration with validated redirect URIs, secret rotation, deletion, secret checks. */
/** An application as the audit log names it. */
export const appTarget = (client: Pick<OAuthClientRecord, 'id' | 'name'>) => ({ type: 'oauth_app', id: client.id, label: client.name });

export class ClientService {
  constructor(
    private readonly store: OAuthClientStore,
    private readonly now: Clock,
    /** Where registrations, secret rotations and deletions are recorded. */
    private readonly audit: AuditLog,
    private readonly self: SelfRegistration = { policy: 'off', documents: null, takeSlot: async () => 0 },
  ) {}

  get registrationPolicy(): RegistrationPolicy {
    return this.self.policy;
  }

  async register(r: ClientRegistration): Promise<RegisteredClient> {
    const name = r.name.trim();
    if (!name) throw invalidRequest('the application needs a name');
    if (codePointCount(name) > MAX_NAME_CHARS) throw invalidRequest(`the application name must be at most ${MAX_NAME_CHARS} characters`);
    const unsafe = unsafeTextProblem(name);
    if (unsafe) throw invalidRequest(`the application name ${unsafe}`);
    const uris = [...new Set(r.redirectUris.map((u) => u.trim()).filter(Boolean))];
    if (uris.length === 0) throw invalidRequest('register at least one redirect URI');
    if (uris.length > MAX_REDIRECT_URIS) throw invalidRequest(`at most ${MAX_REDIRECT_URIS} redirect URIs`);
    for (const uri of uris) {
      const problem = redirectUriProblem(uri);
      if (problem) throw invalidRequest(`redirect URI ${JSON.stringify(uri)} ${problem}`);
    }
    const secret = r.isPublic ? null : newSecret();
    const client = await this.store.create({
      id: newId('app', this.now()),
      userId: r.userId,
      name,
      secretHash: secret ? sha256Hex(secret) : null,
      isPublic: !!r.isPublic,
      redirectUris: uris,
      ...(r.registration ? { registration: r.registration } : {}),
      clientUri: r.clientUri ?? null,
      loopbackAnyPort: !!r.loopbackAnyPort,
    });
    await this.audit.record({ type: 'oauth_app.registered', target: appTarget(client), details: { registration: client.registration, public: client.isPublic, owner: client.userId, redirect_uris: uris } });
    return { client, secret };
  }

  /** RFC 7591: a client that registers itself, owned by `userId` when the policy asked for an account's credential. */
  async registerDynamic(meta: ClientMetadata, userId: string | null): Promise<RegisteredClient> {
    await this.store.evictUnusedDynamic(MAX_UNUSED_DYNAMIC_CLIENTS - 1);
    return this.register({
      name: displayName(meta, 'Unnamed application'),
      redirectUris: meta.redirectUris,
      // RFC 7591 §2: the default method is client_secret_basic, i.e. a confidential client.
      isPublic: meta.authMethod === 'none',
      userId,
      registration: 'dynamic',
      clientUri: meta.clientUri,
      loopbackAnyPort: meta.loopbackAnyPort,
    });
  }

  /** A client by id, for settings pages: registered clients only. */
  find(id: string): Promise<OAuthClientRecord | null> {
    return id.length > 200 ? Promise.resolve(null) : this.store.find(id);
  }

  /**
   * A client by the client_id a protocol request names (authorize, token, revocation): a registered one, or —
   * for an https URL — the client its metadata document describes, fetched (or from the cache). A document that
   * can't be used is invalid_client, saying what was wrong without repeating what the document holds (whoever
   * asks need not be signed in). Nothing is stored here for a client not yet recorded: its row is written when a
   * signed-in user approves it (`record`), so no unauthenticated request adds rows; a fresh fetch of a recorded
   * one updates its row. Fetching a document not yet recorded counts on the caller's address like a registration
   * (429 past the limit): each such request makes this server reach out to a URL of the caller's choosing.
   */
  async resolve(id: string, clientIp: string): Promise<OAuthClientRecord | null> {
    if (!isMetadataDocumentClientId(id)) return this.find(id);
    if (this.self.policy === 'off' || !this.self.documents) throw new InvalidClient(SELF_REGISTRATION_OFF);
    const url = metadataDocumentUrl(id);
    const stored = await this.store.find(id);
    const known = stored?.registration === 'metadata_document' ? stored : null;
    let fetched;
    try {
      fetched = await this.self.documents.get(url, known ? undefined : () => this.admit(clientIp));
    } catch (err) {
      if (err instanceof MetadataFetchError) throw new InvalidClient(`the client metadata document at ${id} could not be fetched: ${err.message}`);
      throw err;
    }
    if (!fetched.fresh && known) return known;
    const invalid = (why: string) => new InvalidClient(`the client metadata document at ${id} is not valid: ${why}`);
    let meta: ClientMetadata;
    try {
      meta = readClientMetadata(fetched.json, { echoValues: false });
    } catch (err) {
      if (err instanceof ClientMetadataProblem) throw invalid(err.message);
      throw err;
    }
    const doc = fetched.json as Record<string, unknown>;
    if (doc.client_id !== id) throw invalid('its client_id must equal the URL it was fetched from');
    // The document is public: a client identified by it cannot keep a secret, so it proves itself with PKCE.
    if (meta.authMethod !== null && meta.authMethod !== 'none') throw invalid('token_endpoint_auth_method must be none');
    if (doc.client_secret !== undefined) throw invalid('it must not contain a client_secret');
    const described = { id, name: displayName(meta, url.host), redirectUris: meta.redirectUris, loopbackAnyPort: meta.loopbackAnyPort, clientUri: meta.clientUri };
    if (known) return this.store.upsertMetadataDocument(described);
    const at = this.now();
    return { ...described, userId: null, secretHash: null, isPublic: true, registration: 'metadata_document', createdAt: at, updatedAt: at };
  }

  /**
   * Before a code is issued to it (a signed-in user approved it): the row of a metadata-document client, written
   * or refreshed. Such rows come only from approvals, each behind a rate-limited fetch, and go with the purge.
   */
  async record(client: OAuthClientRecord): Promise<void> {
    if (client.registration === 'metadata_document') await this.store.upsertMetadataDocument(client);
  }

  /** Throws 429 when the caller's address has used up its registrations. */
  private async admit(clientIp: string): Promise<void> {
    const waitMs = await this.self.takeSlot(clientIp);
    if (waitMs > 0) throw new TooManyRequests('too many client registrations (or unrecorded client metadata documents) from this address', waitMs);
  }

  listOwned(userId: string): Promise<OAuthClientRecord[]> {
    return this.store.listOwned(userId);
  }

  /** A fresh secret for a confidential client the user owns; the old one stops working at once. */
  async rotateSecret(userId: string, id: string): Promise<string> {
    const client = await this.store.find(id);
    if (!client || client.userId !== userId) throw notFound('application');
    if (client.isPublic) throw new AppError('invalid_request', 'public clients have no secret');
    const secret = newSecret();
    if (!(await this.store.replaceSecret(userId, id, sha256Hex(secret)))) throw notFound('application');
    await this.audit.record({ type: 'oauth_app.secret_rotated', target: appTarget(client) });
    return secret;
  }

  /** Deletes an application the user owns, revoking every code and token issued to it. */
  async delete(userId: string, id: string): Promise<void> {
    const client = await this.store.find(id);
    if (!client || !(await this.store.delete(userId, id))) throw notFound('application');
    await this.audit.record({ type: 'oauth_app.deleted', target: appTarget(client) });
  }

  /** Compares a presented secret with the stored hash in constant time. */
  secretMatches(client: OAuthClientRecord, presented: string): boolean {
    return client.secretHash !== null && safeEqual(sha256Hex(presented), client.secretHash);
  }
}
