/**
 * One name in two Unicode spellings, through the REST API (docs/api.md#names): macOS and what comes from it (its
 * folders, WebDAV, S3 keys, zip archives) write names decomposed (NFD, "Cafe" + U+0301), a keyboard elsewhere and
 * browsers' forms composed (NFC, "Café"). They look the same: a name given in either is stored composed and is the
 * same label, project or file name; a filter typed in either finds what the other spelled.
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';

const NFC = (s: string) => s.normalize('NFC');
const NFD = (s: string) => s.normalize('NFD');
const SPELLINGS = [['NFC', NFC], ['NFD', NFD]] as const;

describe('names in NFC and NFD through the API', () => {
  let d: Daemon;
  let u: TestUser;
  daemonForSuite(async (daemon) => {
    d = daemon;
    u = await addUser(d);
  });

  const post = (path: string, body: unknown) => api(d, `/api/v1${path}`, { token: u.apiKey, body });
  const project = async (name: string) => {
    const res = await post('/projects', { name });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; name: string };
  };

  it('a project or label named decomposed is stored composed, and its other spelling is taken (409)', async () => {
    const p = await project(NFD('Müller'));
    expect(p.name).toBe(NFC('Müller'));
    expect((await post('/projects', { name: NFC('Müller') })).status).toBe(409);
    const other = await project('Unicode labels');
    expect((await api(d, `/api/v1/projects/${other.id}`, { method: 'PATCH', token: u.apiKey, body: { name: NFD('müller') } })).status).toBe(409);

    const made = await post(`/projects/${p.id}/labels`, { name: NFD('Café') });
    expect(made.status).toBe(201);
    expect(made.body.name).toBe(NFC('Café'));
    expect((await post(`/projects/${p.id}/labels`, { name: NFC('café') })).status).toBe(409);
    const second = await post(`/projects/${p.id}/labels`, { name: 'Tea' });
    expect((await api(d, `/api/v1/projects/${p.id}/labels/${second.body.id}`, { method: 'PATCH', token: u.apiKey, body: { name: NFD('Café') } })).status).toBe(409);
    const names = (await api(d, `/api/v1/projects/${p.id}/labels`, { token: u.apiKey })).body.labels.map((l: { name: string }) => l.name);
    expect(names).toEqual([NFC('Café'), 'Tea']);
  });

  it('a saved search named decomposed is stored composed, and its other spelling is taken (409), on save and rename', async () => {
    const saved = await post('/saved-searches', { name: NFD('Résumés'), search: { query: 'cv' } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect(saved.body.name).toBe(NFC('Résumés'));
    expect((await post('/saved-searches', { name: NFC('résumés'), search: { query: 'cv' } })).status).toBe(409);
    const other = await post('/saved-searches', { name: 'Letters', search: { query: 'letter' } });
    const rename = (id: string, name: string) => api(d, `/api/v1/saved-searches/${id}`, { method: 'PATCH', token: u.apiKey, body: { name } });
    expect((await rename(other.body.id, NFD('Résumés'))).status).toBe(409);
    // Its own name in the other spelling is no conflict.
    expect((await rename(saved.body.id, NFD('Résumés'))).status).toBe(200);
  });

  it('a document uploaded from a Mac (decomposed path, labels, metadata) is found by filters typed in either spelling, in the list and in search', { timeout: 120_000 }, async () => {
    const p = await project('Unicode documents');
    const up = await uploadFiles(d, u.apiKey, [{ name: NFD('Résumé.txt'), bytes: Buffer.from('The café on the corner serves crème brûlée every morning.') }], {
      projectId: p.id,
      query: '?wait=true',
      metadata: JSON.stringify({ team: NFD('Müller'), [NFD('Größe')]: 'groß', [NFD('Höhe')]: 12 }),
      fields: { paths: JSON.stringify([NFD('Ordner Übersicht/Résumé.txt')]), labels: NFD('Entwürfe') },
    });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const doc = up.body.documents[0];
    // The path is kept as sent (a sync compares it with the folder's own names); the label is stored composed.
    expect(doc.path).toBe(NFD('Ordner Übersicht/Résumé.txt'));
    expect(doc.metadata).toMatchObject({ team: NFD('Müller') });
    expect(doc.filename).toBe(NFC('Résumé.txt'));
    expect(doc.labels).toEqual([NFC('Entwürfe')]);
    // Labelled again in the other spelling: the same label, not a second one.
    const labelled = await api(d, `/api/v1/documents/${doc.id}`, { method: 'PATCH', token: u.apiKey, body: { labels: { add: [NFC('Entwürfe'), NFD('Entwürfe')] } } });
    expect(labelled.body.labels).toEqual([NFC('Entwürfe')]);

    for (const [form, typed] of SPELLINGS) {
      const listed = async (q: Record<string, string>) => {
        const res = await api(d, `/api/v1/documents?project_id=${p.id}&${new URLSearchParams(q)}`, { token: u.apiKey });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return res.body.documents.map((x: { id: string }) => x.id);
      };
      for (const q of <Record<string, string>[]>[
        { labels: typed('entwürfe') },
        { path_prefix: typed('Ordner Übersicht/') },
        { path: typed('Ordner Übersicht/Résumé.txt') },
        { filename: typed('résumé') },
        { 'metadata.team': typed('Müller') },
        { [`metadata.${typed('Größe')}`]: typed('groß') },
        { [`metadata.${typed('Größe')}.$exists`]: 'true' },
        { [`metadata.${typed('Höhe')}.$gte`]: '10' },
      ])
        expect(await listed(q), `${form}: ${JSON.stringify(q)}`).toEqual([doc.id]);

      const found = async (filters: unknown) => {
        const res = await post('/search', { query: 'café corner', project_ids: [p.id], filters });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return res.body.results.map((r: { document: { id: string } }) => r.document.id);
      };
      for (const f of [
        { labels: typed('Entwürfe') },
        { path_prefix: typed('Ordner Übersicht/') },
        { metadata: { team: typed('Müller') } },
        { metadata: { [typed('Größe')]: typed('groß') } },
        { metadata: { [typed('Größe')]: { $exists: true } } },
        { metadata: { [typed('Höhe')]: { $gte: 10 } } },
      ])
        expect(await found(f), `${form}: ${JSON.stringify(f)}`).toEqual([doc.id]);
      // Keyword search folds the query as it folded the text (language/analyse.ts): no defect, held here.
      const keyword = await post('/search', { query: typed('crème brûlée'), project_ids: [p.id], mode: 'keyword' });
      expect(keyword.body.results.map((r: { document: { id: string } }) => r.document.id), form).toEqual([doc.id]);
    }

    // Renamed to a decomposed name, as an uploaded file's name is (multipart.ts): stored composed.
    const renamed = await api(d, `/api/v1/documents/${doc.id}`, { method: 'PATCH', token: u.apiKey, body: { filename: NFD('Übersicht.txt') } });
    expect(renamed.body.filename).toBe(NFC('Übersicht.txt'));
  });
});
