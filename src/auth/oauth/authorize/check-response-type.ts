import { InvalidRequest, UnsupportedResponseType } from '../errors.js';
import type { AuthorizeCheck } from './request.js';

/** Rules: response_type is present and is `code` (the only flow this server implements). */
export const checkResponseType: AuthorizeCheck = (ctx) => {
  const type = ctx.params.response_type;
  if (type === undefined) throw new InvalidRequest('missing required parameter: response_type');
  if (type !== 'code') throw new UnsupportedResponseType('response_type must be code');
};
