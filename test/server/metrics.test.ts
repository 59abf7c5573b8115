import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isLoopbackHost, metricsAccess } from '../../src/server/metrics/access.js';
import { addUser, api, type Daemon, REPO, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { waitFor } from '../helpers/eventually.js';
import { prometheusMissing } from '../helpers/prometheus.js';

/** The samples of a text exposition, by `name{labels}` as written (labels in the order the daemon writes them). */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?) (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    out.set(m[1]!, Number(m[2]));
  }
  return out;
}

/** The sum of every sample of `name` whose labels include all of `labels`. */
function sum(all: Map<string, number>, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const [key, value] of all) {
    const m = /^([^{]+)(?:\{(.*)\})?$/.exec(key)!;
    if (m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total += value;
  }
  return total;
}

/** The table under "## The metrics" in docs/operations.md: each docsearch_ metric's type and label names. */
function documentedMetrics(): Map<string, { type: string; labels: string[] }> {
  const doc = readFileSync(join(REPO, 'docs/operations.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## The metrics'), doc.indexOf('## Alerts'));
  const out = new Map<string, { type: string; labels: string[] }>();
  for (const m of section.matchAll(/^\| `(docsearch_\w+)` \| (\w+) \| ([^|]*) \|/gm)) {
    out.set(m[1]!, { type: m[2]!, labels: [...m[3]!.matchAll(/`(\w+)`/g)].map((l) => l[1]!) });
  }
  return out;
}

async function scrape(d: Daemon, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${d.url}/metrics`, { headers });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The status of a scrape sent with exactly these headers (Host included, which fetch will not let one set). */
function scrapeAs(d: Daemon, headers: Record<string, string>): Promise<number> {
  const url = new URL(`${d.url}/metrics`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

const TEXTS = [
  'Photosynthesis turns light into chemical energy in the chloroplasts of plant cells.',
  'The Roman aqueducts carried water across valleys on arches of stone and concrete.',
  'Tidal forces of the moon raise the oceans twice a day along every coast.',
];

describe('GET /metrics on a loopback bind (the default: open)', () => {
  let d: Daemon;
  let user: TestUser;
  let documentIds: string[];
  daemonForSuite(async (started) => {
    d = started;
    user = await addUser(d);
    const form = new FormData();
    TEXTS.forEach((text, i) => form.append('file', new Blob([text], { type: 'text/plain' }), `doc-${i}.txt`));
    const res = await fetch(`${d.url}/api/v1/upload?wait=true`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
    const body = (await res.json()) as { documents: { id: string; status: string }[] };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.documents.map((doc) => doc.status)).toEqual(['ready', 'ready', 'ready']);
    documentIds = body.documents.map((doc) => doc.id);
  }, { setupTimeoutMs: 120_000 });

  it('counts what was ingested and searched, requests by route name without ids, and the process', async () => {
    const queries = ['chlorophyll light energy', 'stone arches water', 'moon tides', 'aqueduct'];
    for (const query of queries) expect((await api(d, '/api/v1/search', { token: user.apiKey, body: { query } })).status).toBe(200);
    for (const id of documentIds) expect((await api(d, `/api/v1/documents/${id}`, { token: user.apiKey })).status).toBe(200);

    const res = await scrape(d);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.headers.get('set-cookie')).toBeNull();
    const all = samples(res.text);

    expect(sum(all, 'docsearch_documents_ingested_total', { outcome: 'ready' })).toBe(TEXTS.length);
    expect(sum(all, 'docsearch_documents_ingested_total', { outcome: 'failed' })).toBe(0);
    expect(sum(all, 'docsearch_chunks_ingested_total')).toBeGreaterThanOrEqual(TEXTS.length);
    expect(sum(all, 'docsearch_embedded_texts_total', { kind: 'passage' })).toBe(sum(all, 'docsearch_chunks_ingested_total'));
    expect(sum(all, 'docsearch_embed_duration_seconds_count', { kind: 'passage' })).toBeGreaterThan(0);
    expect(sum(all, 'docsearch_embed_duration_seconds_count', { kind: 'query' })).toBe(queries.length);

    expect(sum(all, 'docsearch_search_duration_seconds_count')).toBe(queries.length);
    for (const stage of ['embed', 'keyword', 'vector', 'visibility', 'fusion', 'hydrate']) {
      expect(sum(all, 'docsearch_search_stage_duration_seconds_count', { stage }), stage).toBeGreaterThanOrEqual(queries.length);
    }
    expect(sum(all, 'docsearch_http_request_duration_seconds_count', { method: 'POST', route: 'search', status: '200' })).toBe(queries.length);
    expect(sum(all, 'docsearch_http_request_duration_seconds_count', { method: 'POST', route: 'upload', status: '200' })).toBe(1);
    expect(sum(all, 'docsearch_http_request_duration_seconds_count', { method: 'GET', route: 'documents.get', status: '200' })).toBe(documentIds.length);
    for (const id of documentIds) expect(res.text).not.toContain(id);

    expect(sum(all, 'docsearch_jobs', { state: 'pending' })).toBe(0);
    expect(sum(all, 'docsearch_jobs', { state: 'running' })).toBe(0);
    expect(sum(all, 'docsearch_jobs_oldest_age_seconds', { state: 'pending' })).toBe(0);
    expect(sum(all, 'docsearch_upkeep_leader')).toBe(1);
    expect(sum(all, 'docsearch_index_version')).toBeGreaterThan(0);
    expect(all.has('docsearch_index_unindexed_rows{index="fts"}')).toBe(true);
    expect(all.has('docsearch_index_unindexed_rows{index="vector"}')).toBe(true);
    expect(sum(all, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(sum(all, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(res.text).toMatch(/^docsearch_info\{version="[^"]+",database="(?:sqlite|postgresql)",storage="local",embedder="builtin:[^"]+"\} 1$/m);

    // A table this small has no vector index: once two searches in a row met its version, it is held in memory (every
    // chunk) and answers the flat scans and takes.
    const chunks = sum(all, 'docsearch_chunks_ingested_total');
    await waitFor(
      async () => {
        expect((await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'moon tides' } })).status).toBe(200);
        return sum(samples((await scrape(d)).text), 'docsearch_index_memory_rows') === chunks;
      },
      30_000,
      'the table to be held in memory',
    );
  });

  it('exposes exactly the metrics docs/operations.md lists, each with its documented type and labels', async () => {
    const documented = documentedMetrics();
    expect(documented.size).toBeGreaterThan(20);
    // A search, so the search and query-embedding series exist whichever tests ran before.
    expect((await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'roman aqueduct arches' } })).status).toBe(200);
    const res = await scrape(d);
    const types = new Map([...res.text.matchAll(/^# TYPE (docsearch_\w+) (\w+)$/gm)].map((m) => [m[1]!, m[2]!]));
    expect([...types.keys()].sort(), 'metrics served against metrics documented').toEqual([...documented.keys()].sort());
    const labelsSeen = new Map<string, Set<string>>();
    for (const key of samples(res.text).keys()) {
      const [, base, labels] = /^(\w+)(?:\{(.*)\})?$/.exec(key)!;
      const family = types.has(base!) ? base! : base!.replace(/_(?:bucket|sum|count)$/, '');
      if (!types.has(family)) continue;
      const names = [...(labels ?? '').matchAll(/(\w+)="/g)].map((l) => l[1]!).filter((n) => n !== 'le');
      labelsSeen.set(family, new Set([...(labelsSeen.get(family) ?? []), ...names]));
    }
    for (const [name, doc] of documented) {
      expect(types.get(name), name).toBe(doc.type);
      // A labelled metric shows its labels once it has a series; every one seen here is one the table names.
      const seen = labelsSeen.get(name);
      if (seen && (seen.size > 0 || doc.labels.length === 0)) expect([...seen].sort(), `${name}'s labels`).toEqual([...doc.labels].sort());
    }
    // The series this daemon has had the occasion to create carry their labels (so the check above was made).
    for (const name of ['docsearch_http_request_duration_seconds', 'docsearch_search_stage_duration_seconds', 'docsearch_embed_duration_seconds', 'docsearch_documents_ingested_total', 'docsearch_ocr_pages_total', 'docsearch_jobs', 'docsearch_info']) {
      expect(labelsSeen.get(name)?.size ?? 0, name).toBeGreaterThan(0);
    }
  });

  /**
   * Prometheus' own linter (promtool, from the Debian package the Prometheus test uses) on a scrape: nothing to say of
   * docsearch's metrics (units in the name, `_total` on counters only, help on each). prom-client's Node gauges
   * named `…_total` are its own, and left as dashboards know them.
   */
  it("promtool check metrics finds nothing in docsearch's own metrics", async (t) => {
    const missing = prometheusMissing();
    if (missing) return t.skip(missing);
    expect((await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'roman aqueduct arches' } })).status).toBe(200);
    const lint = spawnSync('/usr/bin/promtool', ['check', 'metrics'], { input: (await scrape(d)).text, encoding: 'utf8' });
    const said = `${lint.stdout}${lint.stderr}`.split('\n').filter((l) => l.trim() !== '');
    expect(said.filter((l) => !/^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/.test(l))).toEqual([]);
  });

  it('an unknown path is counted as unmatched, not by its path', async () => {
    expect((await fetch(`${d.url}/no/such/page-9f3c2a`)).status).toBe(404);
    const res = await scrape(d);
    expect(res.text).not.toContain('page-9f3c2a');
    expect(sum(samples(res.text), 'docsearch_http_request_duration_seconds_count', { route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
  });

  it('a request relayed by a proxy (X-Forwarded-For, Forwarded) gets 404: it may come from anywhere', async () => {
    expect((await scrape(d, { 'x-forwarded-for': '203.0.113.7' })).status).toBe(404);
    expect((await scrape(d, { forwarded: 'for=203.0.113.7' })).status).toBe(404);
    expect((await scrape(d)).status).toBe(200);
  });

  it('other proxies’ headers, and a Host that is not a loopback name (a DNS-rebinding page), get 404 too', async () => {
    const port = new URL(d.url).port;
    // A browser on a page of evil.example whose name now resolves to 127.0.0.1 sends its own host name.
    for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1.nip.io:${port}`, `localhost.evil.example:${port}`]) expect(await scrapeAs(d, { host }), host).toBe(404);
    for (const header of ['via', 'x-real-ip', 'x-forwarded-host', 'x-forwarded-proto', 'true-client-ip', 'cf-connecting-ip']) {
      expect(await scrapeAs(d, { host: `127.0.0.1:${port}`, [header]: header === 'via' ? '1.1 proxy' : '203.0.113.7' }), header).toBe(404);
    }
    // Prometheus on this machine, however it names the target.
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'localhost', `[::1]:${port}`]) expect(await scrapeAs(d, { host }), host).toBe(200);
  });
});

describe('GET /metrics with --metrics-token', () => {
  const token = 'metrics-token-0123456789abcdef';
  let d: Daemon;
  daemonForSuite((started) => void (d = started), { args: ['--metrics-token', token] });

  it('needs the token: 401 with a challenge without it or with another, 200 with it', async () => {
    const none = await scrape(d);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="docsearch-metrics"');
    expect((await scrape(d, { authorization: `Bearer ${token}x` })).status).toBe(401);
    expect((await scrape(d, { authorization: 'Basic bWV0cmljczp4' })).status).toBe(401);
    const ok = await scrape(d, { authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('docsearch_http_request_duration_seconds_count{method="GET",route="metrics",status="401"} 3');
    // Also through a proxy: the token is the credential.
    expect((await scrape(d, { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.7' })).status).toBe(200);
    // The token is a secret: masked in the configuration the log prints.
    expect(d.stdout()).not.toContain(token);
    expect(d.stdout()).toContain('served with a bearer token (--metrics-token)');
  });
});

describe('GET /metrics behind a proxy (--trust-proxy) without a token', () => {
  let d: Daemon;
  daemonForSuite((started) => void (d = started), { args: ['--trust-proxy'] });

  it('is not served (404), and the log says why', async () => {
    expect((await scrape(d)).status).toBe(404);
    expect(d.stdout()).toContain('not served (--trust-proxy says a proxy relays requests here, and no --metrics-token is set)');
  });
});

describe('GET /metrics on a loopback bind published elsewhere (--public-url) without a token', () => {
  let d: Daemon;
  daemonForSuite((started) => void (d = started), { args: ['--public-url', 'https://docs.example.com'] });

  it('is not served (404), even to a request with no forwarding header: the proxy in front need not add one', async () => {
    expect((await scrape(d)).status).toBe(404);
    expect(d.stdout()).toContain('not served (--public-url https://docs.example.com says it is reached from elsewhere (a proxy relays requests here), and no --metrics-token is set)');
  });
});

describe('the access rule', () => {
  const rule = (host: string, extra: { metrics?: string; metricsToken?: string; trustProxy?: boolean; publicUrl?: string } = {}) =>
    metricsAccess({ metrics: 'auto', trustProxy: false, host, ...extra }).kind;

  it('auto: open on a loopback bind, off on any other without a token, token-only with one', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', 'example.com', '128.0.0.1']) expect(isLoopbackHost(host), host).toBe(false);
    expect(rule('127.0.0.1')).toBe('open');
    expect(rule('0.0.0.0')).toBe('off');
    expect(rule('10.0.0.5')).toBe('off');
    expect(rule('127.0.0.1', { trustProxy: true })).toBe('off');
    expect(rule('127.0.0.1', { publicUrl: 'https://docs.example.com' })).toBe('off');
    expect(rule('127.0.0.1', { publicUrl: 'http://127.0.0.1:7411' })).toBe('open');
    expect(rule('127.0.0.1', { publicUrl: 'http://localhost:7411/' })).toBe('open');
    expect(rule('127.0.0.1', { publicUrl: 'https://docs.example.com', metricsToken: 'x'.repeat(32) })).toBe('token');
    expect(rule('0.0.0.0', { metricsToken: 'x'.repeat(32) })).toBe('token');
    expect(rule('127.0.0.1', { metricsToken: 'x'.repeat(32) })).toBe('token');
  });

  it('on serves without a token on any bind; off never serves, token or not', () => {
    expect(rule('0.0.0.0', { metrics: 'on' })).toBe('open');
    expect(rule('0.0.0.0', { metrics: 'on', metricsToken: 'x'.repeat(32) })).toBe('token');
    expect(rule('127.0.0.1', { metrics: 'off' })).toBe('off');
    expect(rule('127.0.0.1', { metrics: 'off', metricsToken: 'x'.repeat(32) })).toBe('off');
  });
});
