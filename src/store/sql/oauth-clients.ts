import { sql } from 'kysely';
import type { Clock } from '../../core/clock.js';
import type { Db } from './database.js';
import type { OAuthClientsTable } from './schema.js';

/** The CLI's built-in public client, seeded by migration 003-oauth in every database. */
export const CLI_CLIENT_ID = 'docsearch-cli';

/**
 * Who registered a client: the operator (`docsearch clients add`, the built-in CLI), a user (Settings →
 * Applications), the client itself (RFC 7591 Dynamic Client Registration), or nobody: its client_id is the URL
 * of its metadata document, fetched on use. The last two are "self-registered": unverified, shown as such on the
 * consent page, and purged when unused.
 */
export type ClientRegistrationKind = 'operator' | 'user' | 'dynamic' | 'metadata_document';
export const SELF_REGISTERED: readonly ClientRegistrationKind[] = ['dynamic', 'metadata_document'];

export interface OAuthClientRecord {
  id: string;
  /** Owner (Settings → Applications); null for operator-registered and built-in clients. */
  userId: string | null;
  name: string;
  /** SHA-256 of the client secret; null for public clients. */
  secretHash: string | null;
  isPublic: boolean;
  redirectUris: string[];
  /** RFC 8252 §7.3: any port on 127.0.0.1 / [::1] is accepted (native apps). */
  loopbackAnyPort: boolean;
  registration: ClientRegistrationKind;
  /** The home page a self-registered client names (shown on consent, never fetched). */
  clientUri: string | null;
  createdAt: number;
  updatedAt: number;
}

export type NewOAuthClient = Pick<OAuthClientRecord, 'id' | 'userId' | 'name' | 'secretHash' | 'isPublic' | 'redirectUris'> &
  Partial<Pick<OAuthClientRecord, 'loopbackAnyPort' | 'registration' | 'clientUri'>>;

type Row = OAuthClientsTable;

const toRecord = (r: Row): OAuthClientRecord => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  secretHash: r.secret_hash,
  isPublic: r.is_public === 1,
  redirectUris: JSON.parse(r.redirect_uris) as string[],
  loopbackAnyPort: r.loopback_any_port === 1,
  registration: r.registration as ClientRegistrationKind,
  clientUri: r.client_uri,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** OAuth clients (registered applications). */
export class OAuthClientStore {
  constructor(
    private readonly db: Db,
    private readonly now: Clock,
  ) {}

  async create(c: NewOAuthClient): Promise<OAuthClientRecord> {
    const now = this.now();
    const row: Row = {
      id: c.id,
      user_id: c.userId,
      name: c.name,
      secret_hash: c.secretHash,
      is_public: c.isPublic ? 1 : 0,
      redirect_uris: JSON.stringify(c.redirectUris),
      loopback_any_port: c.loopbackAnyPort ? 1 : 0,
      created_at: now,
      updated_at: now,
      registration: c.registration ?? (c.userId === null ? 'operator' : 'user'),
      client_uri: c.clientUri ?? null,
    };
    await this.db.insertInto('oauth_clients').values(row).execute();
    return toRecord(row);
  }

  /**
   * Creates or refreshes the row of a client known by its metadata document (keyed by the document's URL), so
   * that codes, grants and tokens can reference it (written when a user approves it); a re-fetched document
   * replaces what was stored.
   */
  async upsertMetadataDocument(c: Pick<OAuthClientRecord, 'id' | 'name' | 'redirectUris' | 'loopbackAnyPort' | 'clientUri'>): Promise<OAuthClientRecord> {
    const now = this.now();
    const fields = { name: c.name, redirect_uris: JSON.stringify(c.redirectUris), loopback_any_port: c.loopbackAnyPort ? 1 : 0, client_uri: c.clientUri, updated_at: now };
    await this.db
      .insertInto('oauth_clients')
      .values({ id: c.id, user_id: null, secret_hash: null, is_public: 1, registration: 'metadata_document', created_at: now, ...fields })
      .onConflict((oc) => oc.column('id').doUpdateSet(fields).where('oauth_clients.registration', '=', 'metadata_document'))
      .execute();
    const stored = await this.find(c.id);
    // Only a URL-shaped id can get here, and no other registration makes one; but never hand back someone else's row.
    if (!stored || stored.registration !== 'metadata_document') throw new Error(`client ${c.id} exists and is not a metadata-document client`);
    return stored;
  }

  /**
   * Keeps at most `keep` dynamically registered (RFC 7591) clients that never got a code or a grant, deleting the
   * oldest beyond that: registration is open to anyone, so their number is bounded here rather than by trust.
   */
  async evictUnusedDynamic(keep: number): Promise<number> {
    const unused = this.db
      .selectFrom('oauth_clients as c')
      .where('c.registration', '=', 'dynamic')
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('oauth_grants as g').select(sql<number>`1`.as('one')).whereRef('g.client_id', '=', 'c.id'))))
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('oauth_codes as k').select(sql<number>`1`.as('one')).whereRef('k.client_id', '=', 'c.id'))));
    const { n } = await unused.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const excess = Number(n) - keep;
    if (excess <= 0) return 0;
    const oldest = unused.select('c.id').orderBy('c.created_at', 'asc').orderBy('c.id', 'asc').limit(excess);
    const res = await this.db.deleteFrom('oauth_clients').where('id', 'in', oldest).executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  /**
   * Deletes self-registered clients last registered (or, for metadata documents, last fetched) before `before`
   * that hold no live grant: none unrevoked with a token still valid at `now`. Their codes go with them.
   */
  async purgeUnusedSelfRegistered(before: number, now: number): Promise<number> {
    const res = await this.db
      .deleteFrom('oauth_clients')
      .where('registration', 'in', [...SELF_REGISTERED])
      .where('updated_at', '<', before)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('oauth_grants as g')
              .innerJoin('oauth_tokens as t', 't.grant_id', 'g.id')
              .select(sql<number>`1`.as('one'))
              .whereRef('g.client_id', '=', 'oauth_clients.id')
              .where('g.revoked_at', 'is', null)
              .where('t.revoked_at', 'is', null)
              .where('t.expires_at', '>', now),
          ),
        ),
      )
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  async find(id: string): Promise<OAuthClientRecord | null> {
    const row = await this.db.selectFrom('oauth_clients').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** The applications a user registered, oldest first. */
  async listOwned(userId: string): Promise<OAuthClientRecord[]> {
    const rows = await this.db.selectFrom('oauth_clients').selectAll().where('user_id', '=', userId).orderBy('created_at', 'asc').orderBy('id').execute();
    return rows.map(toRecord);
  }

  /** Replaces the secret of a confidential client the user owns; false when not theirs. */
  async replaceSecret(userId: string, id: string, secretHash: string): Promise<boolean> {
    const res = await this.db
      .updateTable('oauth_clients')
      .set({ secret_hash: secretHash, updated_at: this.now() })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('is_public', '=', 0)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Deletes a client the user owns; its codes, grants and tokens go with it (foreign-key cascade). */
  async delete(userId: string, id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('oauth_clients').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return Number(res.numDeletedRows) === 1;
  }
}
