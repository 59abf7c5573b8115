/**
 * Facet values with equal counts come in the order names sort everywhere (A–Z folded, then by code point: the labels
 * list's order on both engines), not by the host's locale, which put "äpple" before "zebra" here and would put it
 * after on a Swedish host: which 100 values a facet keeps must not depend on where the daemon runs.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

describe('facet values with equal counts', () => {
  let d: Daemon;
  let alice: TestUser;

  daemonForSuite(async (started) => {
    d = started;
    alice = await addUser(d);
  });

  it('come in name order, as the labels list has them', async () => {
    for (const [name, label] of [
      ['orchard.txt', 'äpple'],
      ['stripes.txt', 'zebra'],
      ['meadow.txt', 'Yarrow'],
    ]) {
      const up = await uploadFiles(d, alice.apiKey, [{ name: name!, bytes: Buffer.from(`The ${name} notes on the grazing rota of the valley farm, ${label}.`) }], { query: '?wait=true', fields: { labels: label! } });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
    }
    const res = await api(d, '/api/v1/search', { token: alice.apiKey, body: { query: 'grazing rota valley farm', facets: ['label'] } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const facet = (res.body as { facets: { label: { value: string; count: number }[] } }).facets.label;
    expect(facet.map((f) => f.count)).toEqual([1, 1, 1]);
    expect(facet.map((f) => f.value)).toEqual(['Yarrow', 'zebra', 'äpple']);
    const project = (await api(d, '/api/v1/projects', { token: alice.apiKey })).body.projects[0].id as string;
    const labels = await api(d, `/api/v1/projects/${project}/labels`, { token: alice.apiKey });
    expect(labels.status, JSON.stringify(labels.body)).toBe(200);
    expect((labels.body as { labels: { name: string }[] }).labels.map((l) => l.name)).toEqual(['Yarrow', 'zebra', 'äpple']);
  });
});
