/**
 * A real Prometheus (Debian's package, on 127.0.0.1) scrapes a daemon's /metrics every second, with the bearer
 * token docs/operations.md configures, while uploads and searches run; then queries over what it scraped count
 * what the test did. It also loads the alert rules docs/operations.md gives operators, which must parse and evaluate.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { type Prometheus, prometheusMissing, startPrometheus } from '../helpers/prometheus.js';
import { waitFor } from '../helpers/eventually.js';

const SKIP = prometheusMissing();
const TOKEN = 'scrape-token-5f0c9e1d7a2b4c6e8f10';
const UPLOADS = 8;
const SEARCHES = 12;

/** The alert rules docs/operations.md shows: the YAML block that starts with `groups:`. */
function documentedRules(): string {
  const doc = readFileSync(join(REPO, 'docs/operations.md'), 'utf8');
  const block = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).find((y) => y.startsWith('groups:'));
  if (!block) throw new Error('docs/operations.md has no ```yaml block starting with groups:');
  return block;
}

describe.skipIf(SKIP !== null)(`Prometheus scrapes /metrics under load${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let d: Daemon;
  let user: TestUser;
  let prom: Prometheus;

  beforeAll(async () => {
    d = await startDaemon({ args: ['--metrics-token', TOKEN] });
    user = await addUser(d);
    prom = await startPrometheus([new URL(d.url).host], { token: TOKEN, rules: documentedRules() });
  }, 120_000);

  afterAll(async () => {
    await prom?.stop();
    if (d) {
      await d.stop();
      removeDir(d.dataDir);
    }
  });

  it('counts the documents ingested and the searches made, per route, from what it scraped', async () => {
    await waitFor(async () => ((await prom.query('up{job="docsearch"}'))[0]?.value === 1 ? true : undefined), 15_000, 'the first scrape', { intervalMs: 250, retryErrors: true });

    // Load: uploads in parallel (each waits until its document is ready) while searches run.
    const uploads = Array.from({ length: UPLOADS }, async (_, i) => {
      const form = new FormData();
      form.append('file', new Blob([`Report ${i}: the harbour crane ${i} lifted ${i * 7 + 3} containers of copper ore during the night shift.`], { type: 'text/plain' }), `report-${i}.txt`);
      const res = await fetch(`${d.url}/api/v1/upload?wait=true`, { method: 'POST', headers: { authorization: `Bearer ${user.apiKey}` }, body: form });
      const body = (await res.json()) as { documents: { status: string }[] };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.documents[0]!.status).toBe('ready');
    });
    const searches = Array.from({ length: SEARCHES }, async (_, i) => {
      const res = await api(d, '/api/v1/search', { token: user.apiKey, body: { query: `harbour crane copper ${i}` } });
      expect(res.status).toBe(200);
    });
    await Promise.all([...uploads, ...searches]);
    const loaded = Date.now() / 1000;

    // A scrape after the load: the counters reach what was done (they never go past it). Not merely one that shows
    // every document ingested: a scrape between the last document's ingest and its upload's answer, or a search
    // still running, holds the request counters short of it.
    const ingested = await waitFor(async () => {
      const [r] = await prom.query(`docsearch_documents_ingested_total{outcome="ready"} and timestamp(docsearch_documents_ingested_total{outcome="ready"}) > ${loaded}`);
      return r && r.value >= UPLOADS ? r : undefined;
    }, 30_000, 'a scrape after the load showing every upload ingested', { intervalMs: 250, retryErrors: true });
    expect(ingested.value).toBe(UPLOADS);
    expect(ingested.metric).toMatchObject({ job: 'docsearch', instance: new URL(d.url).host });

    const one = async (promql: string) => {
      const result = await prom.query(promql);
      expect(result, promql).toHaveLength(1);
      return result[0]!.value;
    };
    expect(await one('sum(docsearch_http_request_duration_seconds_count{route="search"})')).toBe(SEARCHES);
    expect(await one('sum(docsearch_http_request_duration_seconds_count{route="upload",status="200"})')).toBe(UPLOADS);
    expect(await one('docsearch_search_duration_seconds_count')).toBe(SEARCHES);
    expect(await one('docsearch_documents_ingested_total{outcome="failed"}')).toBe(0);
    expect(await one('docsearch_chunks_ingested_total')).toBeGreaterThanOrEqual(UPLOADS);
    expect(await one('docsearch_jobs{state="pending"}')).toBe(0);
    expect(await one('docsearch_upkeep_leader')).toBe(1);
    // A dashboard's query: the search stages' 95th percentile over the last minute, one series per stage.
    // rate() needs two scrapes of a series: the stages' series first appear with the first search, so wait for one more.
    const stages = await waitFor(async () => {
      const series = await prom.query('histogram_quantile(0.95, sum by (stage, le) (rate(docsearch_search_stage_duration_seconds_bucket[1m])))');
      return series.length >= 6 ? series : undefined;
    }, 15_000, 'two scrapes of every search stage', { intervalMs: 250, retryErrors: true });
    expect(stages.map((s) => s.metric.stage).sort()).toEqual(expect.arrayContaining(['embed', 'fusion', 'hydrate', 'keyword', 'vector', 'visibility']));
    // The scrapes themselves went through the token: none was refused.
    expect(await one('sum(docsearch_http_request_duration_seconds_count{route="metrics",status="401"}) or vector(0)')).toBe(0);
  });

  it('loads the alert rules docs/operations.md gives, and evaluates them without errors', async () => {
    const rules = await waitFor(async () => {
      const data = (await prom.get('/api/v1/rules')) as { groups: { rules: { type: string; name: string; health: string; lastError?: string }[] }[] };
      const all = data.groups.flatMap((g) => g.rules);
      return all.length > 0 && all.every((r) => r.health === 'ok') ? all : undefined;
    }, 15_000, 'the documented rules evaluated', { intervalMs: 250, retryErrors: true });
    expect(rules.filter((r) => r.type === 'alerting')).toHaveLength(5);
    // Every query of the documented Grafana dashboard parses and answers over these series.
    const dashboard = JSON.parse(readFileSync(join(REPO, 'docs/grafana-dashboard.json'), 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
    expect(exprs.length).toBeGreaterThan(15);
    // A query over a metric the daemon does not serve (a typo, a renamed metric) still parses and answers an empty
    // vector: so each name a panel reads must be one Prometheus scraped from the daemon.
    const scraped = new Set((await prom.get('/api/v1/label/__name__/values')) as string[]);
    for (const { panel, expr } of exprs) {
      const promql = expr.replaceAll('$job', 'docsearch').replaceAll('$instance', '.*').replaceAll('$__rate_interval', '1m');
      await expect(prom.query(promql), `${panel}: ${promql}`).resolves.toBeDefined();
      for (const name of promql.match(/\b(?:docsearch|process|nodejs)_\w+/g) ?? []) expect(scraped.has(name), `${panel}: ${name} is not a scraped series`).toBe(true);
    }
    // Nothing is wrong with this daemon: no alert fires.
    const alerts = (await prom.get('/api/v1/alerts')) as { alerts: { labels: { alertname: string }; state: string }[] };
    expect(alerts.alerts.filter((a) => a.state === 'firing').map((a) => a.labels.alertname)).toEqual([]);
  });
});
