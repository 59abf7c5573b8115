import { invalidRequest, type AppError } from '../../core/errors.js';

/**
 * A PATCH naming no field to change: an error of the body as a whole, with `details` as every field error has
 * (docs/api.md#conventions). `fields` names what the route takes.
 */
export function nothingToChange(fields: string): AppError {
  const message = `body: nothing to change (${fields})`;
  return invalidRequest(message, [{ path: 'body', message }]);
}
