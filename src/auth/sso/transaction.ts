import { createHmac } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { SecretSealer } from '../../core/sealed-secret.js';

/**
 * What a sign-in through the provider must remember between leaving for the provider and coming back: the `state`,
 * the `nonce` and the PKCE verifier it sent, and the page to return to. Kept in the browser, sealed (AES-GCM) under
 * a key derived from its session cookie's value, which the server never stores: only the browser that started the
 * sign-in can finish it, any replica can read it, and nothing is written to the database before the sign-in is done.
 */
export interface OidcTransaction {
  state: string;
  nonce: string;
  verifier: string;
  returnTo?: string;
  /** Not a sign-in: the signed-in account (its id) asked to be linked to whoever signs in at the provider. */
  linkTo?: string;
  startedAt: number;
}

/** How long someone may take at the provider (signing in, a second factor there, consent). */
export const TRANSACTION_TTL_MS = 15 * 60_000;

const boxFor = (sessionId: string): SecretSealer => new SecretSealer(createHmac('sha256', sessionId).update('docsearch-sso-transaction').digest());

export function sealTransaction(sessionId: string, transaction: OidcTransaction): string {
  return boxFor(sessionId).seal(JSON.stringify(transaction), 'sso');
}

/** The transaction this session sealed, while it is fresh; null for another session's, a damaged or a stale one. */
export function openTransaction(sessionId: string, sealed: string | undefined, now: Clock): OidcTransaction | null {
  if (!sealed) return null;
  const opened = boxFor(sessionId).open(sealed, 'sso');
  if (opened === null) return null;
  let transaction: OidcTransaction;
  try {
    transaction = JSON.parse(opened) as OidcTransaction;
  } catch (err) {
    if (err instanceof SyntaxError) return null;
    throw err;
  }
  const age = now() - transaction.startedAt;
  return age >= 0 && age <= TRANSACTION_TTL_MS ? transaction : null;
}
