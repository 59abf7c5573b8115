/**
 * docs/operations.md (Logs): fields named for a secret are redacted, and the credentials docsearch issues are removed
 * wherever a line holds them; what a line is read for — an error's code, a key that is no credential — stays.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/logger.js';

function jsonLog() {
  const out = new PassThrough();
  let text = '';
  out.on('data', (b: Buffer) => (text += b.toString()));
  const log = createLogger('trace', out);
  return { log, lines: async () => (await new Promise((r) => setImmediate(r)), text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)) };
}

describe('the logger', () => {
  it("keeps error codes: a refusal's code, and a cause's err.code", async () => {
    const { log, lines } = jsonLog();
    log.debug({ code: 'unauthorized', error: 'the credential is not valid, has expired or was revoked' }, 'request rejected');
    log.error({ err: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }) }, 'request failed');
    log.warn({ event: 'lock.lost', key: 'ingest-owner' }, 'lost a lock');
    const [rejected, failed, lock] = await lines();
    expect(rejected).toMatchObject({ code: 'unauthorized', error: 'the credential is not valid, has expired or was revoked', msg: 'request rejected' });
    expect(failed!.err).toMatchObject({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' });
    expect(lock).toMatchObject({ key: 'ingest-owner' });
  });

  it('redacts the fields named for a secret, at the top and one level down', async () => {
    const { log, lines } = jsonLog();
    const named = { authorization: 'Bearer S1', cookie: 'ds_session=S2', password: 'S3', token: 'S4', secret: 'S5', access_token: 'S6', refresh_token: 'S7', client_secret: 'S8', api_key: 'S9' };
    log.info({ ...named, nested: named }, 'named');
    const [line] = await lines();
    const redacted = Object.fromEntries(Object.keys(named).map((k) => [k, '[redacted]']));
    expect(line).toMatchObject({ ...redacted, nested: redacted });
  });

  it('removes the API keys and client secrets it issues wherever a line holds them', async () => {
    const { log, lines } = jsonLog();
    const key = `dsk_${'aB3'.repeat(14)}x`;
    const clientSecret = `dscs_${'Zq9'.repeat(14)}y`;
    log.debug({ code: 'not_found', error: `project "${key}" not found` }, 'request rejected');
    log.info({ method: 'GET', path: `/api/v1/projects/${key}/documents`, status: 404 }, 'request');
    log.error({ err: new Error(`refused ${clientSecret}`) }, 'failed');
    const text = JSON.stringify(await lines());
    expect(text).not.toContain(key.slice(4, 20));
    expect(text).not.toContain(clientSecret.slice(5, 21));
    expect(text).toContain('project \\"dsk_[redacted]\\" not found');
    expect(text).toContain('/api/v1/projects/dsk_[redacted]/documents');
    expect(text).toContain('refused dscs_[redacted]');
  });
});
