/**
 * docs/operations.md (Logs): a refused request's log line says why in the message its client was answered, without
 * what the request sent as a credential wherever it sent it, without anything shaped like a token docsearch issues,
 * and at most 300 characters. The daemon-level sweep (secrets-never-logged.test.ts) drives the same through real
 * refusals; here each source of a credential is taken on its own.
 */
import { describe, expect, it } from 'vitest';
import { rejectionReason } from '../../src/server/rejection-reason.js';

const request = (parts: { headers?: Record<string, string>; query?: Record<string, string | string[]>; body?: unknown }) => ({
  headers: parts.headers ?? {},
  query: parts.query ?? {},
  request: { body: parts.body },
});

describe('the reason a refused request is logged with', () => {
  it('is the message as answered when nothing in it was sent as a credential', () => {
    const message = 'unknown field "colour" in body: did you mean "color"?';
    expect(rejectionReason(request({ headers: { authorization: 'Bearer not-in-the-message-1234' }, body: { colour: 'red' } }), message)).toBe(message);
    // The schemes the messages name are no secret, even sent alone.
    expect(rejectionReason(request({ headers: { authorization: 'Bearer' } }), 'malformed Authorization header: expected "Bearer <token>"')).toBe(
      'malformed Authorization header: expected "Bearer <token>"',
    );
  });

  it('leaves out what the request sent as a credential: header, Basic password, cookie, query token, body fields', () => {
    const cases: [ReturnType<typeof request>, string][] = [
      [request({ headers: { authorization: 'Token s3cret-header-value' } }), 's3cret-header-value'],
      [request({ headers: { authorization: `Basic ${Buffer.from('ann@example.com:hunter2-pass').toString('base64')}` } }), 'hunter2-pass'],
      [request({ headers: { cookie: 'ds_theme=dark; ds_session=cookie-value-42' } }), 'cookie-value-42'],
      [request({ headers: { 'x-api-key': 'header-key-77' } }), 'header-key-77'],
      [request({ query: { access_token: 'query-token-9' } }), 'query-token-9'],
      [request({ body: { email: 'typed-pass-99', password: 'typed-pass-99' } }), 'typed-pass-99'],
      [request({ body: { source: { options: { secretAccessKey: 'nested-secret-5' } } } }), 'nested-secret-5'],
    ];
    for (const [req, secret] of cases) {
      expect(rejectionReason(req, `"${secret}" is not an e-mail address`), secret).toBe('"[redacted]" is not an e-mail address');
    }
  });

  it('leaves out values shaped like the tokens docsearch issues, sent anywhere', () => {
    const hex = 'ab12'.repeat(16);
    const base64url = 'Qm9vbXN0aWNrLXRva2VuLXZhbHVlLTEyMzQ1Njc4OQ';
    const key = `dsk_${'aZ9'.repeat(14)}Q`;
    expect(rejectionReason(request({}), `project "${hex}" not found`)).toBe('project "[redacted]" not found');
    expect(rejectionReason(request({}), `grant_type ${base64url} is not supported`)).toBe('grant_type [redacted] is not supported');
    expect(rejectionReason(request({}), `project "${key}" not found`)).toBe('project "dsk_[redacted]" not found');
    // Ids and words stay.
    expect(rejectionReason(request({}), 'project "prj_0mx3xrw60szDyvUspemb2" not found')).toBe('project "prj_0mx3xrw60szDyvUspemb2" not found');
  });

  it('is at most 300 characters, cut between characters, a key cut by the bound left out before it is cut', () => {
    const long = `label "${'x'.repeat(1000)}" not found`;
    const reason = rejectionReason(request({}), long);
    expect(reason).toHaveLength(300);
    expect(reason.endsWith('…')).toBe(true);
    const key = `dsk_${'aZ9'.repeat(14)}Q`;
    const straddling = rejectionReason(request({}), `${'y'.repeat(280)} ${key}`);
    expect(straddling).not.toContain(key.slice(0, 12));
    // Counted in characters, and cut between them: a query of emoji quoted back keeps no half of one.
    const emoji = rejectionReason(request({}), `query "${'😀'.repeat(400)}" is too long`);
    expect([...emoji]).toHaveLength(300);
    expect(emoji).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });
});
