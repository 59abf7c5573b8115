import { invalidRequest, isAppError } from '../../../core/errors.js';

/** A setting the sources capability refuses, named as its form field is (`url`, `every`, `options.bucket`, …). */
const SETTING = /^(url|kind|every|labels|options(?:\.[^\s:]+)*): /;

/**
 * Runs a change to a source, its refusals named as every other field error of the API: under `body`, with `details`
 * (docs/api.md#conventions). The capability names the setting alone (`url: …`), as the web form shows it beside it.
 */
export async function withBodyFieldErrors<T>(change: () => Promise<T>): Promise<T> {
  try {
    return await change();
  } catch (err) {
    if (!isAppError(err) || err.code !== 'invalid_request' || err.details !== undefined) throw err;
    const field = SETTING.exec(err.message)?.[1];
    if (!field) throw err;
    const message = `body.${err.message}`;
    throw invalidRequest(message, [{ path: `body.${field}`, message }]);
  }
}
