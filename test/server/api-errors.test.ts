import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('API error model, credentials and request ids', () => {
  let d: Daemon;
  let user: TestUser;
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
  });

  /** The error body shape of the brief, with the request id of the response header. */
  function expectError(res: { status: number; headers: Headers; body: any }, status: number, code: string, message?: string | RegExp) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(res.body.error.code).toBe(code);
    if (typeof message === 'string') expect(res.body.error.message).toBe(message);
    else if (message) expect(res.body.error.message).toMatch(message);
    expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
  }

  it('missing credentials: 401 with a bare Bearer challenge', async () => {
    const res = await api(d, '/api/v1/projects');
    expectError(res, 401, 'unauthorized', 'missing credentials: send Authorization: Bearer <API key or access token>');
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="docsearch"');
  });

  it('malformed, garbled and unknown credentials: 401 invalid_token', async () => {
    const cases: [string, string][] = [
      ['Basic dXNlcjpwYXNz', 'malformed Authorization header: expected "Bearer <token>"'],
      ['Bearer', 'malformed Authorization header: expected "Bearer <token>"'],
      ['Bearer two words', 'malformed Authorization header: expected "Bearer <token>"'],
      ['Bearer dsk_short', 'the credential is not valid, has expired or was revoked'],
      [`Bearer ${user.apiKey.slice(0, -1)}${user.apiKey.endsWith('A') ? 'B' : 'A'}`, 'the credential is not valid, has expired or was revoked'],
      [`Bearer dsk_${'A'.repeat(43)}`, 'the credential is not valid, has expired or was revoked'],
      [`Bearer ${'ab'.repeat(32)}`, 'the credential is not valid, has expired or was revoked'], // shaped like an OAuth access token
      [`Bearer ${user.apiKey.toLowerCase()}`, 'the credential is not valid, has expired or was revoked'],
    ];
    for (const [header, message] of cases) {
      const res = await api(d, '/api/v1/projects', { headers: { authorization: header } });
      expectError(res, 401, 'unauthorized', message);
      expect(res.headers.get('www-authenticate'), header).toMatch(/^Bearer realm="docsearch", error="invalid_token", error_description="/);
    }
    // The real key, for contrast, and a case-insensitive scheme.
    expect((await api(d, '/api/v1/projects', { headers: { authorization: `bearer ${user.apiKey}` } })).status).toBe(200);
  });

  it('401 comes before body validation: nothing about the route leaks to anonymous callers', async () => {
    const res = await api(d, '/api/v1/projects', { body: { bogus: 1 } });
    expectError(res, 401, 'unauthorized');
  });

  it('unknown body field: 400 naming the field', async () => {
    const res = await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: 'x', colour: 'red' } });
    expectError(res, 400, 'invalid_request', 'unknown field "colour" in body');
    expect(res.body.error.details).toEqual([{ path: 'body', message: 'unknown field "colour" in body' }]);
    const two = await api(d, '/api/v1/projects', { token: user.apiKey, body: { name: 'x', a: 1, b: 2 } });
    expectError(two, 400, 'invalid_request', 'unknown fields "a", "b" in body');
  });

  it('invalid JSON: 400', async () => {
    for (const body of ['{"name": ', '[1,2', 'null', '"just a string"']) {
      const res = await api(d, '/api/v1/projects', { token: user.apiKey, body });
      expect(res.status, body).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    const res = await api(d, '/api/v1/projects', { token: user.apiKey, body: '{"name": ' });
    expectError(res, 400, 'invalid_request', 'request body is not valid JSON');
  });

  it('wrong content type: 415', async () => {
    const res = await api(d, '/api/v1/projects', { token: user.apiKey, body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectError(res, 415, 'unsupported_media_type', 'request body must be application/json');
    const text = await api(d, '/api/v1/keys', { token: user.apiKey, body: '{}', headers: { 'content-type': 'text/plain' } });
    expectError(text, 415, 'unsupported_media_type');
  });

  it('body over the limit: 413', async () => {
    const huge = JSON.stringify({ name: 'big', description: 'x'.repeat(1024 * 1024 + 10) });
    const res = await api(d, '/api/v1/projects', { token: user.apiKey, body: huge });
    expectError(res, 413, 'payload_too_large');
    // The daemon is fine afterwards.
    expect((await api(d, '/api/v1/projects', { token: user.apiKey })).status).toBe(200);
  });

  it('unknown route: 404 JSON; wrong method: 405', async () => {
    expectError(await api(d, '/api/v1/nothing-here', { token: user.apiKey }), 404, 'not_found', 'no route for GET /api/v1/nothing-here');
    const res = await api(d, '/api/v1/projects', { method: 'PUT', token: user.apiKey, body: {} });
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toContain('GET');
  });

  it('request ids: on every response, echoed when safe, replaced when not, and in the log line', async () => {
    const ok = await api(d, '/api/v1/health');
    expect(ok.headers.get('x-request-id')).toMatch(UUID);
    const page = await fetch(`${d.url}/login`);
    expect(page.headers.get('x-request-id')).toMatch(UUID);

    const echoed = await api(d, '/api/v1/projects', { headers: { 'x-request-id': 'ci-run-42.step_7' } });
    expect(echoed.headers.get('x-request-id')).toBe('ci-run-42.step_7');
    expect(echoed.body.error.request_id).toBe('ci-run-42.step_7');

    for (const unsafe of ['has spaces in it', 'quote"inject', 'x'.repeat(65), '<script>']) {
      const res = await api(d, '/api/v1/projects', { headers: { 'x-request-id': unsafe } });
      expect(res.headers.get('x-request-id'), unsafe).toMatch(UUID);
      expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
    }

    // The daemon's access log line for that request carries the same id, status and path.
    const line = await d.logLine((l) => l.includes('"req_id":"ci-run-42.step_7"') && l.includes('"msg":"request"'));
    expect(JSON.parse(line)).toMatchObject({ method: 'GET', path: '/api/v1/projects', status: 401 });
  });

  it('a passing health check writes no access-log line at the default level (a load balancer sends several a second); a failing one does', async () => {
    const checks = [await api(d, '/api/v1/health', { headers: { 'x-request-id': 'lb-check-1' } }), await api(d, '/api/v1/health', { method: 'HEAD', headers: { 'x-request-id': 'lb-check-2' } })];
    expect(checks.map((c) => c.status)).toEqual([200, 200]);
    // Another path under the same prefix is logged as any request is.
    expect((await api(d, '/api/v1/healthz', { headers: { 'x-request-id': 'not-health-1' } })).status).toBe(404);
    // Lines are written in order: once the later request's line is here, the checks' would be too.
    await d.logLine('"req_id":"not-health-1"');
    const logged = d
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'request')
      .map((l) => l.req_id);
    expect(logged).not.toContain('lb-check-1');
    expect(logged).not.toContain('lb-check-2');
    expect(logged).toContain('not-health-1');
  });

  it('every response carries the security headers and no-store', async () => {
    for (const res of [await api(d, '/api/v1/health'), await api(d, '/api/v1/projects', { token: user.apiKey })]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
  });
});
