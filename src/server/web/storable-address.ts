import type { Middleware } from 'koa';
import { invalidRequest } from '../../core/errors.js';
import { firstUnstorable, unstorableProblem } from '../../core/storable-text.js';

/**
 * A page's address (its decoded path and query) with a NUL or a lone surrogate is refused before any page looks it
 * up: PostgreSQL fails on such a value (a 500) where SQLite finds nothing (a 404), and no browser sends them. The
 * REST API checks its own in parseInput (api/validate.ts).
 */
export const storableAddress: Middleware = async (ctx, next) => {
  let path: string;
  try {
    path = decodeURIComponent(ctx.path);
  } catch {
    path = ctx.path; // not percent-encoding: the router answers it as it does today
  }
  const inPath = unstorableProblem(path);
  if (inPath) throw invalidRequest(`the address ${inPath}`);
  const inQuery = firstUnstorable(ctx.query);
  if (inQuery) throw invalidRequest(`${inQuery.path || 'the query'}: ${inQuery.problem}`);
  return next();
};
