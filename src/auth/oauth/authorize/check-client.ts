import { InvalidClient, InvalidRequest } from '../errors.js';
import type { AuthorizeCheck } from './request.js';

/**
 * Rules: client_id is present and names a registered client. Failures are never redirected
 * (there is no trusted redirect target yet): the endpoint shows an error page.
 */
export const checkClient: AuthorizeCheck = async (ctx) => {
  const id = ctx.params.client_id;
  if (id === undefined) throw new InvalidRequest('missing required parameter: client_id');
  const client = await ctx.clients.resolve(id, ctx.clientIp);
  if (!client) throw new InvalidClient('unknown client_id: no application is registered under it');
  ctx.client = client;
};
