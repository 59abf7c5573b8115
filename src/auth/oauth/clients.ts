import type { Clock } from '../../core/clock.js';
import { AppError, invalidRequest, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { randomBase62, safeEqual, sha256Hex } from '../../core/secrets.js';
import type { OAuthClientRecord, OAuthClientStore } from '../../store/sql/oauth-clients.js';
import { redirectUriProblem } from './redirect-uri.js';

/** The CLI's built-in public client (seeded by migration 003-oauth). */
export const CLI_CLIENT_ID = 'docsearch-cli';
const SECRET_PREFIX = 'dscs_';
const MAX_REDIRECT_URIS = 10;

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
}

const newSecret = () => SECRET_PREFIX + randomBase62(43);

/** Registered applications: registration with validated redirect URIs, secret rotation, deletion, secret checks. */
export class ClientService {
  constructor(
    private readonly store: OAuthClientStore,
    private readonly now: Clock,
  ) {}

  async register(r: ClientRegistration): Promise<RegisteredClient> {
    const name = r.name.trim();
    if (!name) throw invalidRequest('the application needs a name');
    if (name.length > 100) throw invalidRequest('the application name must be at most 100 characters');
    const uris = [...new Set(r.redirectUris.map((u) => u.trim()).filter(Boolean))];
    if (uris.length === 0) throw invalidRequest('register at least one redirect URI');
    if (uris.length > MAX_REDIRECT_URIS) throw invalidRequest(`at most ${MAX_REDIRECT_URIS} redirect URIs`);
    for (const uri of uris) {
      const problem = redirectUriProblem(uri);
      if (problem) throw invalidRequest(`redirect URI ${uri} ${problem}`);
    }
    const secret = r.isPublic ? null : newSecret();
    const client = await this.store.create({
      id: newId('app', this.now()),
      userId: r.userId,
      name,
      secretHash: secret ? sha256Hex(secret) : null,
      isPublic: !!r.isPublic,
      redirectUris: uris,
    });
    return { client, secret };
  }

  find(id: string): Promise<OAuthClientRecord | null> {
    return id.length > 200 ? Promise.resolve(null) : this.store.find(id);
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
    return secret;
  }

  /** Deletes an application the user owns, revoking every code and token issued to it. */
  async delete(userId: string, id: string): Promise<void> {
    if (!(await this.store.delete(userId, id))) throw notFound('application');
  }

  /** Compares a presented secret with the stored hash in constant time. */
  secretMatches(client: OAuthClientRecord, presented: string): boolean {
    return client.secretHash !== null && safeEqual(sha256Hex(presented), client.secretHash);
  }
}
