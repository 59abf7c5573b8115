/**
 * Text log lines (`--log-format text`): one line per event from pino's redacted JSON, so a secret redacted in JSON is
 * redacted here, and a logged value cannot act on the terminal (a file name holding an escape sequence).
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/logger.js';

function textLog(color = false) {
  const out = new PassThrough();
  let text = '';
  out.on('data', (b: Buffer) => (text += b.toString()));
  return { log: createLogger('trace', out, { format: 'text', color }), text: async () => (await new Promise((r) => setImmediate(r)), text) };
}

describe('text log lines', () => {
  it('a request as "GET /path 200 12 ms", other events as message and plain fields', async () => {
    const { log, text } = textLog();
    log.child({ req_id: 'r1' }).info({ method: 'GET', path: '/api/v1/search', status: 200, ms: 12, client_ip: '127.0.0.1', user: 'usr_1' }, 'request');
    log.warn({ event: 'ocr.fallback', engine: 'tesseract.js', reason: 'no native Tesseract' }, 'OCR goes on with tesseract.js');
    log.error({ err: new Error('disk full'), document_id: 'doc_1', config: { port: 1 } }, 'ingest failed');
    // An error's code, told after its message when the message does not say it.
    log.error({ err: Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }) }, 'request failed');
    log.error({ err: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }) }, 'request failed');
    log.debug({ code: 'not_found', error: 'project "p" not found' }, 'request rejected');
    expect((await text()).replace(/^\d\d:\d\d:\d\d /gm, 'T ')).toBe(
      'T INFO  GET /api/v1/search 200 12 ms client_ip=127.0.0.1 user=usr_1\n' +
        'T WARN  OCR goes on with tesseract.js engine=tesseract.js reason="no native Tesseract"\n' +
        'T ERROR ingest failed: disk full document_id=doc_1\n' +
        'T ERROR request failed: terminating connection due to administrator command (57P01)\n' +
        'T ERROR request failed: connect ECONNREFUSED 127.0.0.1:5432\n' +
        'T DEBUG request rejected code=not_found error="project \\"p\\" not found"\n',
    );
  });

  it('redacts what JSON redacts: no secret reaches the line', async () => {
    const { log, text } = textLog();
    log.info({ token: 'tok-SECRET-1', password: 'pw-SECRET-2', secret: 'SECRET-3', code: 'unauthorized', authorization: 'Bearer SECRET-5' }, 'signed in');
    const line = await text();
    expect(line).not.toMatch(/SECRET/);
    expect(line).toContain('token=[redacted] password=[redacted] secret=[redacted] code=unauthorized authorization=[redacted]');
  });

  it('keeps each event on one line and shows control characters instead of obeying them', async () => {
    const { log, text } = textLog();
    log.info({ filename: 'evil\x1b]0;owned\x07.pdf' }, 'uploaded\nsecond line');
    const line = await text();
    expect(line.split('\n')).toHaveLength(2);
    expect(line).not.toContain('\x1b');
    expect(line).toContain('uploaded\\nsecond line filename=evil\\x1b]0;owned\\x07.pdf');
  });

  it('styles time and level only when asked (a terminal without NO_COLOR)', async () => {
    const plain = textLog(false);
    plain.log.warn('careful');
    expect(await plain.text()).not.toContain('\x1b');
    const coloured = textLog(true);
    coloured.log.warn('careful');
    expect(await coloured.text()).toMatch(/^\x1b\[2m\d\d:\d\d:\d\d\x1b\[0m \x1b\[33mWARN \x1b\[0m careful\n$/);
  });
});
