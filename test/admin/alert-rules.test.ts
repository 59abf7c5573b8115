/**
 * What docs/operations.md hands an operator to paste — the scrape configuration, the alert rules, the Grafana
 * dashboard — checked as Prometheus' own promtool reads them, and every metric they (and the prose around them) name
 * held to the table under "The metrics", with the labels and label values it documents. The table itself is held
 * to a real scrape by test/server/metrics.test.ts, so a rule or panel reading a metric, label or value the daemon
 * does not serve (a typo, a rename: Prometheus evaluates it to nothing and never alerts) fails here.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/daemon.js';
import { missingFile } from '../helpers/requirement.js';

const PROMTOOL = '/usr/bin/promtool';
const DOC = readFileSync(join(REPO, 'docs/operations.md'), 'utf8');
const section = (from: string, to: string) => DOC.slice(DOC.indexOf(from), DOC.indexOf(to));
const yamlBlock = (start: string) => {
  const block = [...DOC.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).find((y) => y.startsWith(start));
  if (!block) throw new Error(`docs/operations.md has no yaml block starting with ${start}`);
  return block;
};

/** The metrics table: each docsearch_ metric's label names, and the values its row names in backticks. */
const TABLE = new Map(
  [...section('## The metrics', '## Alerts').matchAll(/^\| `(docsearch_\w+)` \| \w+ \| ([^|]*) \| (.*) \|$/gm)].map((m) => [
    m[1]!,
    { labels: [...m[2]!.matchAll(/`(\w+)`/g)].map((l) => l[1]!), words: new Set([...m[3]!.matchAll(/`([^`]+)`/g)].map((w) => w[1]!)) },
  ]),
);

/** Each docsearch_ series a PromQL text reads, as its family in the table, with its label matchers. */
function seriesRead(promql: string): { text: string; family: string; matchers: { label: string; op: string; value: string }[] }[] {
  return [...promql.matchAll(/\b(docsearch_\w+)(?:\{([^}]*)\})?/g)].map((m) => {
    const name = m[1]!;
    const family = TABLE.has(name) ? name : name.replace(/_(?:bucket|sum|count)$/, '');
    const matchers = [...(m[2] ?? '').matchAll(/(\w+)\s*(=~|!=|!~|=)\s*"([^"]*)"/g)].map((x) => ({ label: x[1]!, op: x[2]!, value: x[3]! }));
    return { text: m[0], family, matchers };
  });
}

function promtool(args: string[]): { code: number | null; said: string } {
  const res = spawnSync(PROMTOOL, args, { encoding: 'utf8' });
  return { code: res.status, said: `${res.stdout}${res.stderr}` };
}

const SKIP = missingFile(PROMTOOL, 'Debian package prometheus');

describe('the alerts, scrape configuration and dashboard docs/operations.md gives', () => {
  it('reads the metrics table (so the checks below compare against something)', () => {
    expect(TABLE.size).toBeGreaterThan(20);
    expect(TABLE.get('docsearch_jobs_oldest_age_seconds')?.labels).toEqual(['state']);
  });

  it.skipIf(SKIP !== null)(`promtool check rules passes the alert rules: five alerts${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-rules-'));
    writeFileSync(join(dir, 'rules.yml'), yamlBlock('groups:'));
    const checked = promtool(['check', 'rules', join(dir, 'rules.yml')]);
    expect(checked.said).toContain('SUCCESS: 5 rules found');
    expect(checked.code, checked.said).toBe(0);
  });

  it.skipIf(SKIP !== null)(`promtool check config passes the scrape configuration (its token file in place)${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-scrape-'));
    writeFileSync(join(dir, 'token'), 'scrape-token-0123456789abcdef\n');
    const config = yamlBlock('scrape_configs:');
    expect(config).toContain('credentials_file: /etc/prometheus/docsearch-token');
    writeFileSync(join(dir, 'prometheus.yml'), config.replace('/etc/prometheus/docsearch-token', join(dir, 'token')));
    const checked = promtool(['check', 'config', join(dir, 'prometheus.yml')]);
    expect(checked.code, checked.said).toBe(0);
  });

  it('every metric the alerts and their advice name is in the table, read by labels it has and values it names', () => {
    const text = section('## Alerts', '## Administration');
    const read = seriesRead(text);
    // The rules' own metrics are among them (so the matching below found the rules).
    expect(read.map((r) => r.family)).toEqual(
      expect.arrayContaining(['docsearch_http_request_duration_seconds', 'docsearch_search_duration_seconds', 'docsearch_jobs_oldest_age_seconds', 'docsearch_upkeep_leader']),
    );
    for (const r of read) {
      const row = TABLE.get(r.family);
      expect(row, `${r.text}: not in the metrics table`).toBeDefined();
      for (const m of r.matchers) {
        expect(row!.labels, `${r.text}: ${r.family} has no label ${m.label}`).toContain(m.label);
        // An exact value must be one the table documents for that metric (status codes are numbers, matched by regex).
        if (m.op === '=') expect(row!.words.has(m.value), `${r.text}: ${m.label}="${m.value}" is not a value the table names`).toBe(true);
      }
    }
  });

  it('the dashboard: an instance variable every query filters by, and the rows the doc lists, in order', () => {
    const dashboard = JSON.parse(readFileSync(join(REPO, 'docs/grafana-dashboard.json'), 'utf8')) as {
      templating: { list: { name: string }[] };
      panels: { type: string; title: string; targets?: { expr: string }[] }[];
    };
    expect(dashboard.templating.list.map((v) => v.name)).toContain('instance');
    expect(dashboard.panels.filter((p) => p.type === 'row').map((p) => p.title)).toEqual(['Requests', 'Search', 'Ingestion', 'Index', 'Process']);
    for (const p of dashboard.panels) for (const t of p.targets ?? []) expect(t.expr, p.title).toContain('instance=~"$instance"');
    for (const p of dashboard.panels) {
      for (const r of seriesRead((p.targets ?? []).map((t) => t.expr).join('\n'))) {
        const row = TABLE.get(r.family);
        expect(row, `${p.title}: ${r.family} is not in the metrics table`).toBeDefined();
        for (const m of r.matchers.filter((x) => x.label !== 'job' && x.label !== 'instance')) {
          expect(row!.labels, `${p.title}: ${r.family} has no label ${m.label}`).toContain(m.label);
          if (m.op === '=') expect(row!.words.has(m.value), `${p.title}: ${m.label}="${m.value}"`).toBe(true);
        }
      }
    }
  });
});
