import { isScope, KEYS_SCOPE } from '../../../auth/scopes.js';
import { z } from 'zod';
import { AppError } from '../../../core/errors.js';
import { type KeyExpiry, MAX_KEY_DAYS } from '../../../core/key-expiry.js';
import { parseMoment } from '../../../core/moment.js';
import { MAX_NAME_CHARS } from '../../../core/name-limits.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ApiKey, ErrorBody, readableText, ScopeSchema } from '../schemas.js';
import { keyToWire } from './wire.js';

/** A key's name, as the API and the web's Settings › API keys take it. */
export const KeyName = z.string().trim().min(1).max(MAX_NAME_CHARS).superRefine(readableText);

/**
 * A new credential is minted only for an account that has the second factor the policy asks of it: the key or CLI
 * login making it may predate the policy (or a reset of the account's factors), and a password alone must not
 * lead, through an older credential, to fresh ones.
 */
async function refuseWithoutRequiredFactor(s: Services, userId: string): Promise<void> {
  const user = await s.accounts.findUser(userId);
  if (user && s.twoFactor.required(user) && !(await s.twoFactor.hasSecondFactor(userId))) {
    throw new AppError('forbidden', 'this server requires a second factor for your account: set one up in Settings → Security before making keys');
  }
}

export const createKey = (s: Services) =>
  defineRoute({
    name: 'keys.create',
    method: 'POST',
    path: '/keys',
    scope: 'write:documents',
    credentials: ['api_key'],
    tokensWith: KEYS_SCOPE,
    tag: 'keys',
    summary: 'Create an API key. The response is the only time the key is shown. A key cannot hold scopes its creator lacks. Callable with an API key, or with the CLI\'s browser login (manage:keys).',
    body: z.strictObject({
      name: KeyName.optional(),
      scopes: z.array(ScopeSchema).min(1).optional().describe('default: both scopes'),
      project_ids: z
        .array(z.string().min(1).max(100))
        .min(1)
        .max(100)
        .optional()
        .describe('limit the key to these projects (each one the caller may read); default: every project its user may read, now and later'),
      expires_in_days: z.number().int().min(1).max(MAX_KEY_DAYS).optional().describe('the key stops working this many days from now; default: it never expires'),
      expires_at: z
        .string()
        .max(40)
        .refine((v) => parseMoment(v) !== null, 'must be a date (2027-01-31: from 00:00 UTC that day) or an RFC 3339 timestamp with its offset')
        .optional()
        .describe(`when the key stops working: a date (from 00:00 UTC) or an RFC 3339 timestamp, in the future and within ${MAX_KEY_DAYS} days; not with expires_in_days`),
    }),
    responses: {
      201: { description: 'Created', schema: ApiKey.extend({ key: z.string().describe('the API key; shown once') }) },
      400: { description: 'Invalid body; an expiry past, more than 3650 days away, or given twice', schema: ErrorBody },
      403: { description: 'Scope not held by the caller, or the account owes the second factor `--require-2fa` asks of it', schema: ErrorBody },
      404: { description: 'A project of `project_ids` the caller may not read, named', schema: ErrorBody },
    },
    async handler({ body, principal }) {
      if (body.expires_in_days !== undefined && body.expires_at !== undefined) throw new AppError('invalid_request', 'body: give expires_in_days or expires_at, not both');
      const expires: KeyExpiry = body.expires_in_days !== undefined ? { days: body.expires_in_days } : body.expires_at !== undefined ? { at: parseMoment(body.expires_at)! } : 'never';
      await refuseWithoutRequiredFactor(s, principal.userId);
      // A key holds document scopes only: the CLI login's manage:keys stays with the login.
      const scopes = body.scopes ?? principal.scopes.filter(isScope);
      const missing = scopes.filter((sc) => !principal.scopes.includes(sc));
      if (missing.length > 0) throw new AppError('insufficient_scope', `cannot grant scopes the caller lacks: ${missing.join(', ')}`);
      // A key limited to projects may make keys only within its own limit (access.scope refuses the rest).
      const projectIds = body.project_ids ? await s.access.scope(principal, body.project_ids) : principal.projectLimit;
      const issued = await s.apiKeys.issue(principal.userId, body.name ?? null, { scopes: [...new Set(scopes)], projectIds: projectIds ? [...projectIds] : null, expires });
      return { status: 201, body: { ...keyToWire(issued.record, false), key: issued.key } };
    },
  });
