/**
 * The filter language (issue 60) through the REST API, against an exact evaluation: a library of mixed formats,
 * two upload moments, three uploaders, shared and private projects, labels, paths and metadata
 * (test/helpers/filter-library.ts); every single filter and a generated set of combinations, searched and listed by
 * each person, must answer exactly the documents they may read that match — and facet counts must equal an exact
 * count of that list. MCP's `search` and `list_documents` (in the daemon, and `docsearch mcp` over REST) take the same
 * `filters` and answer the same, and so do the CLI's flags on `search` and `documents list`. Saved searches are each
 * person's, shared with a project's members (a key limited to projects sees only those of its projects and its user's
 * own unshared ones), and run by name (`search --saved NAME`) with the same answers. The web search page takes the
 * same filters in its URL, counts facets as links that narrow it (a label's adds to the labels asked), shows the
 * filters in force as chips that remove them, and lists saved searches, each run over the projects it was saved with.
 * The `language` filter reads each passage's language in search and the document's in the list. On SQLite
 * here and on PostgreSQL in the `postgresql` project.
 */
import { describe, expect, it } from 'vitest';
import { typeFilterName } from '../../src/core/document-types.js';
import { filtersToParams } from '../../src/core/filter-params.js';
import { api, type Daemon, runCli } from '../helpers/daemon.js';
import { cliEnv } from '../cli/cli-env.js';
import { buildLibrary, combinedFilters, expected, expectedFacets, type Library, type Person, singleFilters } from '../helpers/filter-library.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { call, callError, httpClient, stdioClient } from '../mcp/mcp-client.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { hiddenFields, loggedIn } from '../server/web-client.js';

const PEOPLE: Person[] = ['alice', 'bob', 'carol'];

describe('filters over REST', () => {
  let d: Daemon;
  let lib: Library;
  daemonForSuite(
    async (started) => {
      d = started;
      lib = await buildLibrary(d);
    },
    { setupTimeoutMs: 240_000 },
  );

  const searchIds = async (who: Person, filters: Record<string, unknown>, facets?: string[]) => {
    const res = await api(d, '/api/v1/search', {
      token: lib.users[who].apiKey,
      body: { query: 'harbour', mode: 'keyword', group: 'document', limit: 100, filters, ...(facets ? { facets } : {}) },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { ids: (res.body.documents as { document: { id: string } }[]).map((r) => r.document.id).sort(), body: res.body };
  };

  const listIds = async (who: Person, filters: Record<string, unknown>) => {
    const params = new URLSearchParams([...filtersToParams(filters), ['limit', '100']]);
    const res = await api(d, `/api/v1/documents?${params}`, { token: lib.users[who].apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.documents as { id: string }[]).map((r) => r.id).sort();
  };

  const want = (who: Person, filters: Record<string, unknown>) => expected(lib, who, filters).map((doc) => doc.id).sort();

  it('answers each filter exactly, for each person, in search and in the document list', async () => {
    let nonEmpty = 0;
    for (const filters of singleFilters(lib)) {
      for (const who of PEOPLE) {
        const ids = want(who, filters);
        if (ids.length > 0) nonEmpty++;
        expect((await searchIds(who, filters)).ids, `search ${who} ${JSON.stringify(filters)}`).toEqual(ids);
        expect(await listIds(who, filters), `list ${who} ${JSON.stringify(filters)}`).toEqual(ids);
      }
    }
    // The library is made so that filters keep something (not only empty answers).
    expect(nonEmpty).toBeGreaterThan(60);
  });

  it('answers combinations exactly', async () => {
    for (const filters of combinedFilters(lib, 30)) {
      for (const who of PEOPLE) {
        const ids = want(who, filters);
        expect((await searchIds(who, filters)).ids, `search ${who} ${JSON.stringify(filters)}`).toEqual(ids);
        expect(await listIds(who, filters), `list ${who} ${JSON.stringify(filters)}`).toEqual(ids);
      }
    }
  });

  it('counts facets over the whole filtered list, only of documents the caller may read', async () => {
    const facets = ['type', 'project', 'uploaded_by', 'year', 'label', 'language', 'metadata.team'];
    for (const filters of [{}, { labels: 'unpaid' }, { metadata: { team: 'ops' } }, { type: 'pdf' }]) {
      for (const who of PEOPLE) {
        // A page of one result: the counts still cover the whole list.
        const res = await api(d, '/api/v1/search', {
          token: lib.users[who].apiKey,
          body: { query: 'harbour', mode: 'keyword', group: 'document', limit: 1, filters, facets },
        });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const docs = expected(lib, who, filters);
        expect(res.body.total).toEqual({ value: docs.length, relation: 'eq' });
        const exact = expectedFacets(lib, docs);
        for (const facet of facets) {
          const got = Object.fromEntries((res.body.facets[facet] as { value: unknown; count: number }[]).map((v) => [facet === 'label' ? String(v.value).toLowerCase() : facet.startsWith('metadata.') ? JSON.stringify(v.value) : String(v.value), v.count]));
          expect(got, `${who} ${JSON.stringify(filters)} ${facet}`).toEqual(exact[facet]);
        }
        // Eve's documents carry the same labels and teams: none of them counts for anyone else.
        const projectIds = (res.body.facets.project as { value: string }[]).map((v) => v.value);
        expect(projectIds).not.toContain(lib.projects.eves);
      }
    }
  });

  it('counts passages when not grouped: each facet sums to the total, and counts what the whole list holds', async () => {
    const res = await api(d, '/api/v1/search', { token: lib.users.alice.apiKey, body: { query: 'harbour', mode: 'keyword', limit: 2, facets: ['type', 'project'] } });
    expect(res.status).toBe(200);
    const sum = (facet: string) => (res.body.facets[facet] as { count: number }[]).reduce((a, b) => a + b.count, 0);
    expect(sum('type')).toBe(res.body.total.value);
    expect(sum('project')).toBe(res.body.total.value);
    expect((res.body.facets.project as { name: string }[]).map((p) => p.name).sort()).toEqual(['private', 'shared']);
    // The whole list's passages, read in one page: per value, the facet counts exactly its passages.
    expect(res.body.total.relation).toBe('eq');
    const all = await api(d, '/api/v1/search', { token: lib.users.alice.apiKey, body: { query: 'harbour', mode: 'keyword', limit: 100 } });
    const passages = all.body.results as { document: { content_type: string }; project: { id: string } }[];
    expect(passages.length).toBe(res.body.total.value);
    const tally = (values: string[]) => values.reduce<Record<string, number>>((out, v) => ({ ...out, [v]: (out[v] ?? 0) + 1 }), {});
    const counted = (facet: string) => Object.fromEntries((res.body.facets[facet] as { value: string; count: number }[]).map((v) => [v.value, v.count]));
    expect(counted('type')).toEqual(tally(passages.map((p) => typeFilterName(p.document.content_type))));
    expect(counted('project')).toEqual(tally(passages.map((p) => p.project.id)));
  });

  it("counts a weak answer's facets over the few results it shows", async () => {
    const res = await api(d, '/api/v1/search', { token: lib.users.alice.apiKey, body: { query: 'xyzzyplugh frobnicate', mode: 'hybrid', limit: 10, facets: ['type', 'project'] } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.weak).toBe(true);
    const shown = res.body.results as { document: { content_type: string }; project: { id: string } }[];
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThanOrEqual(5);
    const tally = (values: string[]) => values.reduce<Record<string, number>>((out, v) => ({ ...out, [v]: (out[v] ?? 0) + 1 }), {});
    const counted = (facet: string) => Object.fromEntries((res.body.facets[facet] as { value: string; count: number }[]).map((v) => [v.value, v.count]));
    expect(counted('type')).toEqual(tally(shown.map((p) => typeFilterName(p.document.content_type))));
    expect(counted('project')).toEqual(tally(shown.map((p) => p.project.id)));
  });

  it("filters search by each passage's own language and the list by the document's (most of its passages')", async () => {
    // Eve's own project, which no one else reads: a document of two German sections and one English one.
    const de1 =
      'Die Schleusenwärterin öffnet das Obertor erst, wenn das Wasser in der Kammer den Pegel des Oberwassers erreicht hat. ' +
      'Jedes Boot wartet am Leitwerk, bis das Signal auf Grün springt, und die Besatzung hält die Leinen bereit. Bei Hochwasser bleibt ' +
      'die Schleuse geschlossen, und die Wärterin trägt die Sperrung in das Schleusenbuch ein. Die Gebühren werden im Schleusenhaus bezahlt, ' +
      'bar oder mit Karte, und für Sportboote gilt im Winter ein eigener Tarif mit verkürzten Öffnungszeiten an den Wochenenden.';
    const de2 =
      'Im Frühjahr wird die Kammer trockengelegt, damit Taucher die Tore und die Dichtungen prüfen können. Währenddessen ' +
      'fahren die Schiffe über den alten Kanal, der schmaler und langsamer ist, und die Lotsen begleiten jedes größere Fahrzeug. ' +
      'Die Wärterin meldet den Zustand der Tore an das Wasserstraßenamt, das über die Reparaturen entscheidet und die Kosten trägt. ' +
      'Anlieger werden eine Woche vorher durch Aushang am Schleusenhaus und in der Gemeindezeitung informiert.';
    const en =
      'The lock keeper opens the upper gate only when the water in the chamber has reached the level upstream. Every boat waits ' +
      'at the guide wall until the signal turns green, and its crew keeps the lines ready. In a flood the lock stays shut, and the keeper ' +
      'writes the closure into the lock book. Fees are paid at the lock house, in cash or by card, and small craft have a winter rate ' +
      'with shorter opening hours at weekends.';
    const bytes = Buffer.from(`# Schleusenordnung\n\n${de1}\n\n# Frühjahrsprüfung\n\n${de2}\n\n# Lock rules\n\n${en}\n`);
    const up = await uploadFiles(d, lib.users.eve.apiKey, [{ name: 'schleuse.md', bytes }], { projectId: lib.projects.eves, query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const doc = up.body.documents[0] as { id: string; language: string; chunk_count: number };
    expect(doc.language).toBe('de');
    const passages = async (language: string) => {
      const res = await api(d, '/api/v1/search', { token: lib.users.eve.apiKey, body: { query: 'Schleuse lock keeper Wärterin gate', mode: 'keyword', limit: 100, project_ids: [lib.projects.eves], filters: { language } } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body.results as { document: { id: string }; text: string }[]).filter((r) => r.document.id === doc.id).map((r) => r.text);
    };
    const english = await passages('en');
    expect(english.length, JSON.stringify(english)).toBe(1);
    expect(english[0]).toContain('The lock keeper opens the upper gate');
    const german = await passages('de');
    expect(german.length).toBeGreaterThan(0);
    expect(german.every((t) => !t.includes('The lock keeper'))).toBe(true);
    // The language facet counts what the filter of each value returns: passages by their own language, and a document
    // (grouped) under each language of its passages in the list.
    const counted = async (body: Record<string, unknown>) => {
      const res = await api(d, '/api/v1/search', { token: lib.users.eve.apiKey, body: { query: 'Schleuse lock keeper Wärterin gate', mode: 'keyword', limit: 100, project_ids: [lib.projects.eves], document_ids: [doc.id], facets: ['language'], ...body } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return Object.fromEntries((res.body.facets.language as { value: string; count: number }[]).map((v) => [v.value, v.count]));
    };
    expect(await counted({})).toEqual({ de: german.length, en: 1 });
    expect(await counted({ filters: { language: 'en' } })).toEqual({ en: 1 });
    expect(await counted({ filters: { language: 'de' } })).toEqual({ de: german.length });
    expect(await counted({ group: 'document' })).toEqual({ de: 1, en: 1 });
    expect(await counted({ group: 'document', filters: { language: 'en' } })).toEqual({ en: 1 });
    const listed = async (language: string) => ((await api(d, `/api/v1/documents?project_id=${lib.projects.eves}&language=${language}`, { token: lib.users.eve.apiKey })).body.documents as { id: string }[]).map((x) => x.id);
    expect(await listed('de')).toContain(doc.id);
    expect(await listed('en')).not.toContain(doc.id);

    // `und`: a text whose language none could tell, in search, the list and the facet alike.
    const table = await uploadFiles(d, lib.users.eve.apiKey, [{ name: 'berths.csv', bytes: Buffer.from('vessel,berth,cargo\nAurora,north,timber\nBorealis,south,grain\nCassiopeia,east,"copper ore, refined"\n') }], { projectId: lib.projects.eves, query: '?wait=true' });
    expect(table.status, JSON.stringify(table.body)).toBe(200);
    const csv = table.body.documents[0] as { id: string; language: string };
    expect(csv.language).toBe('und');
    const undetermined = await api(d, '/api/v1/search', { token: lib.users.eve.apiKey, body: { query: 'Borealis grain', mode: 'keyword', group: 'document', project_ids: [lib.projects.eves], filters: { language: 'und' }, facets: ['language'] } });
    expect(undetermined.status, JSON.stringify(undetermined.body)).toBe(200);
    expect((undetermined.body.documents as { document: { id: string } }[]).map((x) => x.document.id)).toEqual([csv.id]);
    expect(undetermined.body.facets.language).toEqual([{ value: 'und', count: 1 }]);
    const inEnglish = await api(d, '/api/v1/search', { token: lib.users.eve.apiKey, body: { query: 'Borealis grain', mode: 'keyword', project_ids: [lib.projects.eves], filters: { language: 'en' } } });
    expect(inEnglish.body.results).toEqual([]);
    expect(await listed('und')).toEqual([csv.id]);
  });

  it('refuses a bad filter with a 400 naming the field or operator', async () => {
    const bad: [unknown, RegExp][] = [
      [{ colour: 'red' }, /unknown field "colour" in body\.filters/],
      [{ type: 'exe' }, /body\.filters\.type: unknown type "exe"/],
      [{ type: ['pdf', 'zip'] }, /body\.filters\.type\.1: unknown type "zip"/],
      [{ metadata: { year: { $foo: 1 } } }, /"\$foo".*body\.filters\.metadata\.year/],
      [{ metadata: { year: { $in: 'x' } } }, /body\.filters\.metadata\.year\.\$in/],
      [{ metadata: { year: { $gte: 'soon' } } }, /body\.filters\.metadata\.year\.\$gte/],
      [{ metadata: { year: { $gte: 2020, $lte: '2021-01-01' } } }, /\$gte and \$lte must all be numbers or all be dates/],
      [{ metadata: { year: [2020] } }, /body\.filters\.metadata\.year: must be a value/],
      [{ metadata: { year: {} } }, /body\.filters\.metadata\.year: needs an operator/],
      [{ uploaded_since: 'yesterday' }, /body\.filters\.uploaded_since/],
      [{ uploaded_by: 'bob' }, /body\.filters\.uploaded_by: must be an e-mail/],
      [{ labels: ['a,b'] }, /body\.filters\.labels\.0: must not contain a comma/],
      [{ language: 'english' }, /body\.filters\.language: must be a language code/],
    ];
    for (const [filters, message] of bad) {
      const res = await api(d, '/api/v1/search', { token: lib.users.alice.apiKey, body: { query: 'harbour', filters } });
      expect(res.status, JSON.stringify(filters)).toBe(400);
      expect(res.body.error.message, JSON.stringify(filters)).toMatch(message);
    }
    const facet = await api(d, '/api/v1/search', { token: lib.users.alice.apiKey, body: { query: 'harbour', facets: ['colour'] } });
    expect(facet.status).toBe(400);
    expect(facet.body.error.message).toMatch(/body\.facets\.0: unknown facet "colour"/);
    for (const [query, message] of [
      ['type=exe', /query\.type: unknown type "exe"/],
      ['colour=red', /unknown field "colour"/],
      ['metadata.year.$foo=1', /query\.metadata\.year\.\$foo: unknown operator "\$foo"/],
      ['metadata=notjson', /query\.metadata: must be a JSON object/],
      ['uploaded_before=2025-02-30', /query\.uploaded_before: is not a real date/],
    ] as const) {
      const res = await api(d, `/api/v1/documents?${query}`, { token: lib.users.alice.apiKey });
      expect(res.status, query).toBe(400);
      expect(res.body.error.message, query).toMatch(message);
    }
  });

  it('takes metadata as parameters of their own in a list query: text matches text and the number it spells', async () => {
    const { users } = lib;
    const ids = async (query: string) => ((await api(d, `/api/v1/documents?${query}&limit=100`, { token: users.alice.apiKey })).body.documents as { id: string }[]).map((x) => x.id).sort();
    const both = [...want('alice', { metadata: { year: 2021 } }), ...want('alice', { metadata: { year: '2021' } })].sort();
    expect(await ids('metadata.year=2021')).toEqual(both);
    expect(await ids('metadata.year.$gte=2022')).toEqual(want('alice', { metadata: { year: { $gte: 2022 } } }));
    expect(await ids('metadata.team=ops&metadata.team=legal')).toEqual(want('alice', { metadata: { team: { $in: ['ops', 'legal'] } } }));
    expect(await ids('labels=unpaid,urgent')).toEqual(want('alice', { labels: ['unpaid', 'urgent'] }));
    expect(await ids('type=pdf&type=docx')).toEqual(want('alice', { type: ['pdf', 'docx'] }));
  });

  it('answers the same filters through MCP: search and list_documents, in the daemon and over stdio', async () => {
    const clients = [await httpClient(d, lib.users.bob.apiKey), await stdioClient(d.url, lib.users.bob.apiKey)];
    try {
      const filterSets = [...singleFilters(lib), ...combinedFilters(lib, 8, 61)];
      for (const [n, client] of clients.entries()) {
        // The daemon's /mcp takes every filter; stdio (the REST API underneath) every third, to keep the suite short.
        for (const filters of filterSets.filter((_, i) => n === 0 || i % 3 === 0)) {
          const ids = want('bob', filters);
          const found = await call(client, 'search', { query: 'harbour', mode: 'keyword', group: 'document', limit: 50, filters });
          expect((found.documents as { document_id: string }[]).map((x) => x.document_id).sort(), `mcp search ${n} ${JSON.stringify(filters)}`).toEqual(ids);
          const listed = await call(client, 'list_documents', { limit: 100, filters });
          expect((listed.documents as { id: string }[]).map((x) => x.id).sort(), `mcp list ${n} ${JSON.stringify(filters)}`).toEqual(ids);
        }
        const faceted = await call(client, 'search', { query: 'harbour', mode: 'keyword', group: 'document', limit: 1, filters: { labels: 'unpaid' }, facets: ['type', 'label'] });
        const exact = expectedFacets(lib, expected(lib, 'bob', { labels: 'unpaid' }));
        expect(Object.fromEntries((faceted.facets.type as { value: string; count: number }[]).map((v) => [v.value, v.count]))).toEqual(exact.type);
        expect(Object.fromEntries((faceted.facets.label as { value: string; count: number }[]).map((v) => [v.value.toLowerCase(), v.count]))).toEqual(exact.label);
        expect(await callError(client, 'search', { query: 'harbour', filters: { type: 'exe' } })).toMatch(/unknown type "exe"/);
        expect(await callError(client, 'list_documents', { filters: { colour: 'red' } })).toMatch(/colour/);
      }
    } finally {
      for (const c of clients) await c.close();
    }
  });

  it('answers the same through the CLI: filter flags on search and documents list, --facets as a table', async () => {
    const cli = (...args: string[]) => runCli([...args, '--server', d.url], { env: cliEnv(null, { DOCSEARCH_TOKEN: lib.users.bob.apiKey }) });
    const e = (p: Person) => lib.users[p].email;
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.parse(today) + 86_400_000).toISOString().slice(0, 10);
    const cases: [string[], Record<string, unknown>][] = [
      [['--type', 'pdf', '--type', 'markdown'], { type: ['pdf', 'markdown'] }],
      [['--since', lib.between], { uploaded_since: lib.between }],
      [['--before', lib.between, '--path', 'contracts/'], { uploaded_before: lib.between, path_prefix: 'contracts/' }],
      // #60's spelling: --until takes in the whole of the day it names (every upload was today); --path-prefix, the
      // flag's earlier name, still works.
      [['--until', today, '--path-prefix', 'contracts/'], { uploaded_before: tomorrow, path_prefix: 'contracts/' }],
      [['--until', lib.between], { uploaded_before: new Date(Date.parse(lib.between) + 1).toISOString() }],
      [['--by', e('alice')], { uploaded_by: e('alice') }],
      [['--label', 'unpaid', '--label', 'urgent'], { labels: ['unpaid', 'urgent'] }],
      [['--lang', 'en'], { language: 'en' }],
      [['--lang', 'de'], { language: 'de' }],
      [['--meta', 'team=ops', '--meta', 'team=legal'], { metadata: { team: { $in: ['ops', 'legal'] } } }],
      [['--meta', 'year>=2022'], { metadata: { year: { $gte: 2022 } } }],
      [['--meta', '!team'], { metadata: { team: { $exists: false } } }],
    ];
    for (const [flags, filters] of cases) {
      const ids = want('bob', filters);
      const found = await cli('search', 'harbour', '--mode', 'keyword', '--documents', '--all', ...flags, '--json');
      expect(found.code, found.stderr).toBe(0);
      expect((JSON.parse(found.stdout).documents as { document: { id: string } }[]).map((x) => x.document.id).sort(), `search ${flags.join(' ')}`).toEqual(ids);
      const listed = await cli('documents', 'list', ...flags, '--json');
      expect(listed.code, listed.stderr).toBe(0);
      expect((JSON.parse(listed.stdout).documents as { id: string }[]).map((x) => x.id).sort(), `documents list ${flags.join(' ')}`).toEqual(ids);
    }
    const table = await cli('search', 'harbour', '--mode', 'keyword', '--documents', '--label', 'unpaid', '--facets', 'type,label');
    expect(table.code, table.stderr).toBe(0);
    const exact = expectedFacets(lib, expected(lib, 'bob', { labels: 'unpaid' }));
    // Every row of the table, no more and no fewer than the exact counts.
    const rows = (facet: string) => Object.fromEntries([...table.stdout.matchAll(new RegExp(`^${facet}\\t([^\\t\\n]+)\\t(\\d+)$`, 'gm'))].map((m) => [facet === 'label' ? m[1]!.toLowerCase() : m[1]!, Number(m[2])]));
    expect(rows('type'), table.stdout).toEqual(exact.type);
    expect(rows('label'), table.stdout).toEqual(exact.label);
    // --facets alone counts by every facet but metadata's.
    const all = await cli('search', 'harbour', '--mode', 'keyword', '--documents', '--label', 'unpaid', '--facets');
    expect(all.code, all.stderr).toBe(0);
    expect(new Set([...all.stdout.matchAll(/^(\w+)\t[^\t\n]+\t\d+$/gm)].map((m) => m[1])), all.stdout).toEqual(new Set(['type', 'project', 'uploaded_by', 'year', 'label', 'language']));
    const bad = await cli('search', 'harbour', '--type', 'exe');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/unknown type "exe"/);
    const badMeta = await cli('documents', 'list', '--meta', '=x');
    expect(badMeta.code).not.toBe(0);
    expect(badMeta.stderr).toMatch(/--meta "=x"/);
  });

  it('saves searches per person, shares them with a project\'s members only, and runs them by name from the CLI', async () => {
    const token = (p: Person | 'eve') => lib.users[p].apiKey;
    const saved = (who: Person | 'eve', body: unknown) => api(d, '/api/v1/saved-searches', { token: token(who), body });
    const names = async (who: Person | 'eve') => ((await api(d, '/api/v1/saved-searches', { token: token(who) })).body.saved_searches as { name: string }[]).map((v) => v.name);
    const unpaid = { query: 'harbour', mode: 'keyword', filters: { labels: 'unpaid' } };

    const made = await saved('alice', { name: 'Unpaid invoices', search: unpaid, project_id: lib.projects.shared });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ name: 'Unpaid invoices', project_id: lib.projects.shared, created_by: lib.users.alice.email, mine: true, search: { query: 'harbour', filters: { labels: 'unpaid' } } });
    expect((await saved('alice', { name: 'unpaid INVOICES', search: unpaid })).status).toBe(409);
    expect((await saved('carol', { name: 'mine', search: unpaid, project_id: lib.projects.shared })).status).toBe(403); // a viewer does not share
    const carols = await saved('carol', { name: 'mine', search: unpaid });
    expect(carols.status, JSON.stringify(carols.body)).toBe(201);
    expect((await saved('eve', { name: 'x', search: unpaid, project_id: lib.projects.shared })).status).toBe(404);
    const badType = await saved('alice', { name: 'x', search: { query: 'harbour', filters: { type: 'exe' } } });
    expect(badType.status).toBe(400);
    expect(badType.body.error.message).toMatch(/unknown type "exe"/);
    const elsewhere = await saved('alice', { name: 'x', search: { query: 'harbour', project_ids: [lib.projects.private] }, project_id: lib.projects.shared });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error.message).toMatch(/search\.project_ids/);

    // Each sees their own and those shared with a project they read; nobody else learns of one.
    expect(await names('alice')).toEqual(['Unpaid invoices']);
    expect(await names('bob')).toEqual(['Unpaid invoices']);
    expect(await names('carol')).toEqual(['mine', 'Unpaid invoices']);
    expect(await names('eve')).toEqual([]);
    const one = (who: Person | 'eve', id: string, method = 'GET') => api(d, `/api/v1/saved-searches/${id}`, { token: token(who), method });
    expect((await one('bob', made.body.id)).body.mine).toBe(false);
    expect((await one('eve', made.body.id)).status).toBe(404);
    expect((await one('alice', carols.body.id)).status).toBe(404);
    expect((await one('eve', made.body.id, 'DELETE')).status).toBe(404);
    expect((await one('bob', made.body.id, 'DELETE')).status).toBe(403);

    // A key limited to projects sees those shared with its projects and its user's own unshared ones (api.md#saved-searches):
    // not one shared with a project outside its limit, its user's own included.
    const keyOf = async (who: Person, projectIds: string[]) => {
      const res = await api(d, '/api/v1/keys', { token: token(who), body: { name: `saved ${projectIds.join(' ')}`, project_ids: projectIds } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.key as string;
    };
    const namesThrough = async (key: string) => ((await api(d, '/api/v1/saved-searches', { token: key })).body.saved_searches as { name: string }[]).map((v) => v.name);
    const carolsOnly = await keyOf('carol', [lib.projects.carols]);
    expect(await namesThrough(carolsOnly)).toEqual(['mine']);
    expect((await api(d, `/api/v1/saved-searches/${made.body.id}`, { token: carolsOnly })).status).toBe(404);
    expect((await api(d, `/api/v1/saved-searches/${carols.body.id}`, { token: carolsOnly })).status).toBe(200);
    // Run through that key, her search reads only what the key reaches: it carries no access of its own.
    const viaKey = await runCli(['search', '--saved', 'mine', '--documents', '--all', '--json', '--server', d.url], { env: cliEnv(null, { DOCSEARCH_TOKEN: carolsOnly }) });
    expect(viaKey.code, viaKey.stderr).toBe(0);
    const inCarols = want('carol', { labels: 'unpaid' }).filter((id) => lib.docs.find((x) => x.id === id)!.projectId === lib.projects.carols);
    expect(inCarols.length).toBeGreaterThan(0);
    expect(inCarols.length).toBeLessThan(want('carol', { labels: 'unpaid' }).length);
    expect((JSON.parse(viaKey.stdout).documents as { document: { id: string } }[]).map((x) => x.document.id).sort()).toEqual(inCarols);
    expect(await namesThrough(await keyOf('carol', [lib.projects.shared]))).toEqual(['mine', 'Unpaid invoices']);
    const alicePrivate = await keyOf('alice', [lib.projects.private]);
    expect(await namesThrough(alicePrivate)).toEqual([]);
    expect((await api(d, `/api/v1/saved-searches/${made.body.id}`, { token: alicePrivate })).status).toBe(404);

    // The CLI runs one by name (any case), the command line's filters over its own, and saves another.
    const cli = (...args: string[]) => runCli([...args, '--server', d.url], { env: cliEnv(null, { DOCSEARCH_TOKEN: token('bob') }) });
    const ran = async (...args: string[]) => {
      const res = await cli('search', ...args, '--documents', '--all', '--json');
      expect(res.code, res.stderr).toBe(0);
      return (JSON.parse(res.stdout).documents as { document: { id: string } }[]).map((x) => x.document.id).sort();
    };
    expect(want('bob', { labels: 'unpaid' }).length).toBeGreaterThan(0);
    expect(await ran('--saved', 'unpaid invoices')).toEqual(want('bob', { labels: 'unpaid' }));
    expect(await ran('--saved', 'Unpaid invoices', '--type', 'pdf')).toEqual(want('bob', { labels: 'unpaid', type: 'pdf' }));
    const saving = await cli('search', 'harbour', '--mode', 'keyword', '--label', 'urgent', '--save', 'urgent ones', '--share', 'shared');
    expect(saving.code, saving.stderr).toBe(0);
    expect(saving.stderr).toContain('saved as "urgent ones" (shared with shared\'s members)');
    expect(await names('carol')).toEqual(['mine', 'Unpaid invoices', 'urgent ones']);
    expect(await ran('--saved', 'URGENT ones')).toEqual(want('bob', { labels: 'urgent' }));
    const unknown = await cli('search', '--saved', 'nothing like it');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no saved search named "nothing like it"');

    expect((await one('alice', made.body.id, 'DELETE')).status).toBe(204);
    expect(await names('bob')).toEqual(['urgent ones']);
  });

  it('answers the same on the web search page: filters in the URL, facet counts as links, chips that remove a filter, saved searches listed', async () => {
    const web = await loggedIn(d, lib.users.carol);
    const unescape = (x: string) => x.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'");
    /** The documents a search page and its next pages show, and its first page's HTML. */
    const page = async (path: string) => {
      const first = await web.get(path);
      expect(first.status, first.text.slice(0, 500)).toBe(200);
      const ids: string[] = [];
      for (let res = first; ; ) {
        ids.push(...[...res.text.matchAll(/<li class="result" data-document-id="([^"]+)"/g)].map((m) => m[1]!));
        const next = /<a href="([^"]+)" rel="next"/.exec(res.text);
        if (!next) break;
        res = await web.get(unescape(next[1]!));
      }
      return { ids: ids.sort(), html: first.text };
    };
    const base = '/search?q=harbour&mode=keyword';
    for (const filters of [{}, { labels: 'unpaid' }, { type: ['pdf', 'markdown'] }, { metadata: { team: 'ops' } }, { uploaded_since: lib.between, labels: 'urgent' }]) {
      const params = new URLSearchParams(filtersToParams(filters));
      expect((await page(`${base}&${params}`)).ids, `web ${params}`).toEqual(want('carol', filters));
    }
    // Facet counts are those of the whole filtered list, each a link to the list narrowed by its value.
    const { html } = await page(`${base}&labels=unpaid`);
    const exact = expectedFacets(lib, expected(lib, 'carol', { labels: 'unpaid' }));
    /** The value a facet link narrows to: the last of its parameter in the link (a type's, a language's). */
    const narrowsTo = (href: string, param: string) => new URLSearchParams(unescape(href).split('?')[1]).getAll(param).at(-1)!;
    const typeLinks = [...(/<div class="facet" data-facet="type">(.*?)<\/div>/s.exec(html)?.[1] ?? '').matchAll(/<a href="([^"]+)"><bdi>([^<]+)<\/bdi> <span class="count">(\d+)<\/span>/g)];
    expect(Object.fromEntries(typeLinks.map((m) => [narrowsTo(m[1]!, 'type'), Number(m[3])]))).toEqual(exact.type);
    // Types read as the Documents page writes them, not as filters name them.
    const TYPE_SHOWN: Record<string, string> = { pdf: 'PDF', markdown: 'Markdown', txt: 'Text', html: 'HTML', docx: 'DOCX', md: 'Markdown', email: 'E-mail', eml: 'E-mail' };
    for (const m of typeLinks) expect(m[2], m[1]).toBe(TYPE_SHOWN[narrowsTo(m[1]!, 'type')]);
    const [, href, shownType] = typeLinks[0]!;
    const type = narrowsTo(href!, 'type');
    const narrowed = await page(unescape(href!));
    expect(narrowed.ids).toEqual(want('carol', { labels: 'unpaid', type }));
    // Each filter in force is a chip; its link is the search without it.
    const chip = /<a class="chip" href="([^"]+)" aria-label="Remove the filter Type: ([^"]+)"/.exec(narrowed.html);
    expect(chip?.[2]).toBe(shownType);
    expect((await page(unescape(chip![1]!))).ids).toEqual(want('carol', { labels: 'unpaid' }));
    // A label's link adds to the labels asked (the label in force is no link); another facet's replaces its filter.
    // A label's value in its colour (as the Documents list shows it), any other as text.
    const facetLinks = (page: string, facet: string) =>
      [
        ...(new RegExp(`<div class="facet" data-facet="${facet}">(.*?)</div>`, 's').exec(page)?.[1] ?? '').matchAll(
          /<a href="([^"]+)">(?:<bdi>|<span class="doc-labels"><bdi class="badge label-[a-z]+">)([^<]+)<\/bdi>(?:<\/span>)? <span class="count">(\d+)<\/span>/g,
        ),
      ].map((m) => ({ href: unescape(m[1]!), value: m[2]!, count: Number(m[3]) }));
    const labelLinks = facetLinks(html, 'label');
    const { unpaid: _inForce, ...others } = exact.label!;
    expect(Object.keys(others).length).toBeGreaterThan(0);
    expect(Object.fromEntries(labelLinks.map((l) => [l.value.toLowerCase(), l.count]))).toEqual(others);
    const both = await page(labelLinks[0]!.href);
    expect(both.ids).toEqual(want('carol', { labels: ['unpaid', labelLinks[0]!.value] }));
    expect(both.ids.length).toBeLessThan(want('carol', { labels: 'unpaid' }).length);
    expect(both.html).toContain('aria-label="Remove the filter Label: unpaid"');
    expect(both.html).toContain(`aria-label="Remove the filter Label: ${labelLinks[0]!.value}"`);
    const languageLinks = facetLinks((await page(base)).html, 'language');
    expect(Object.fromEntries(languageLinks.map((l) => [narrowsTo(l.href, 'language'), l.count]))).toEqual(expectedFacets(lib, expected(lib, 'carol', {})).language);
    // A language reads by its name, its code beside it, as on the project page.
    const german = languageLinks.find((l) => narrowsTo(l.href, 'language') === 'de')!;
    expect(german.value).toBe('German (de)');
    const inGerman = await page(german.href);
    expect(inGerman.ids).toEqual(want('carol', { language: 'de' }));
    expect(inGerman.html).toContain('aria-label="Remove the filter Language: German (de)"');
    // The uploader facet: each uploader's count of the filtered list, a link that narrows to their documents.
    const uploaderLinks = facetLinks(html, 'uploaded_by');
    expect(Object.fromEntries(uploaderLinks.map((l) => [narrowsTo(l.href, 'uploaded_by'), l.count]))).toEqual(exact.uploaded_by);
    expect(uploaderLinks.length).toBeGreaterThan(1);
    const uploader = narrowsTo(uploaderLinks[0]!.href, 'uploaded_by');
    expect(uploaderLinks[0]!.value).toBe(uploader);
    const byOne = await page(uploaderLinks[0]!.href);
    expect(byOne.ids).toEqual(want('carol', { labels: 'unpaid', uploaded_by: uploader }));
    expect(byOne.ids.length).toBeLessThan(want('carol', { labels: 'unpaid' }).length);
    expect(byOne.html).toContain(`aria-label="Remove the filter By: ${uploader}"`);
    // A bad filter says what is wrong, and keeps the chip to remove it.
    const bad = await web.get(`${base}&type=exe`);
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/unknown type (&quot;|")exe/);
    expect(bad.text).toContain('aria-label="Remove the filter Type: exe"');
    // Saved searches (hers and those shared with a project she reads) are links that run them: one shared with a
    // project and saved without projects runs over that project, not over everything she reads.
    const saved = await api(d, '/api/v1/saved-searches', { token: lib.users.bob.apiKey, body: { name: 'Web ops', search: { query: 'harbour', mode: 'keyword', filters: { metadata: { team: 'ops' } } }, project_id: lib.projects.shared } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const home = await web.get('/search');
    const link = /<nav class="saved-searches"[^]*?<a href="([^"]+)"><bdi>Web ops<\/bdi><\/a> <span class="badge">shared<\/span>/.exec(home.text);
    expect(link, home.text.slice(0, 2000)).not.toBeNull();
    const inShared = expected(lib, 'carol', { metadata: { team: 'ops' } }).filter((doc) => doc.projectId === lib.projects.shared).map((doc) => doc.id).sort();
    expect(inShared.length).toBeGreaterThan(0);
    expect(inShared.length).toBeLessThan(want('carol', { metadata: { team: 'ops' } }).length);
    expect((await page(unescape(link![1]!))).ids).toEqual(inShared);

    // A saved search of several projects (`search --project A --project C --save`) runs on the web over those
    // projects only, and the page's links (a facet's, a chip's) keep them.
    const eve = lib.users.eve;
    const made = async (name: string) => (await api(d, '/api/v1/projects', { token: eve.apiKey, body: { name } })).body.id as string;
    const [eveTwo, eveThree] = [await made('eve-two'), await made('eve-three')];
    const other = await uploadFiles(d, eve.apiKey, [{ name: 'elsewhere.txt', bytes: Buffer.from('The harbour ferry timetable for the winter, kept apart.') }], { projectId: eveTwo, query: '?wait=true' });
    expect(other.status, JSON.stringify(other.body)).toBe(200);
    const saving = await runCli(['search', 'harbour', '--mode', 'keyword', '--project', 'eves', '--project', 'eve-three', '--save', 'two of three', '--json', '--server', d.url], { env: cliEnv(null, { DOCSEARCH_TOKEN: eve.apiKey }) });
    expect(saving.code, saving.stderr).toBe(0);
    const scoped = await api(d, '/api/v1/search', { token: eve.apiKey, body: { query: 'harbour', mode: 'keyword', group: 'document', limit: 100, project_ids: [lib.projects.eves, eveThree] } });
    const inScope = (scoped.body.documents as { document: { id: string } }[]).map((x) => x.document.id).sort();
    expect(inScope.length).toBeGreaterThan(0);
    expect(inScope).not.toContain(other.body.documents[0].id);
    const eveWeb = await loggedIn(d, eve);
    const eveHome = await eveWeb.get('/search');
    const eveLink = /<a href="([^"]+)"><bdi>two of three<\/bdi><\/a>/.exec(eveHome.text);
    expect(eveLink, eveHome.text.slice(0, 2000)).not.toBeNull();
    const ran = await eveWeb.get(unescape(eveLink![1]!));
    expect(ran.status).toBe(200);
    expect([...ran.text.matchAll(/<li class="result" data-document-id="([^"]+)"/g)].map((m) => m[1]!).sort()).toEqual(inScope);
    const typeLink = /<div class="facet" data-facet="type">.*?<a href="([^"]+)">/s.exec(ran.text);
    expect(typeLink).not.toBeNull();
    const narrowedProjects = new URLSearchParams(unescape(typeLink![1]!).split('?')[1]).getAll('project').sort();
    expect(narrowedProjects).toEqual([lib.projects.eves, eveThree].sort());
    // Saved again from that page, it keeps both projects.
    const saveForm = /<form method="post" action="\/search\/save"[^]*?<\/form>/.exec(ran.text)?.[0] ?? '';
    expect([...saveForm.matchAll(/<input type="hidden" name="project" value="([^"]+)">/g)].map((m) => m[1]).sort()).toEqual([lib.projects.eves, eveThree].sort());
  });

  it('filters the web Documents page by label, shows each document\'s labels, and labels a selection (editors only)', async () => {
    const rowsOf = (page: string) => [...page.matchAll(/<tr data-document-id="([^"]+)"/g)].map((m) => m[1]!).sort();
    const bob = await loggedIn(d, lib.users.bob);
    const list = await bob.get('/documents?labels=unpaid');
    expect(list.status).toBe(200);
    expect(rowsOf(list.text)).toEqual(want('bob', { labels: 'unpaid' }));
    expect(list.text).toMatch(/class="badge label-[a-z]+" title="Documents labelled unpaid"><bdi>unpaid<\/bdi>/);
    expect(rowsOf((await bob.get('/documents?labels=unpaid,urgent')).text)).toEqual(want('bob', { labels: ['unpaid', 'urgent'] }));

    const [first, second] = want('bob', {});
    const labelsOf = async (id: string) => (await api(d, `/api/v1/documents/${id}`, { token: lib.users.bob.apiKey })).body.labels as string[];
    const before = await labelsOf(first!);
    const bulk = (who: typeof bob, action: string, labels: string) => who.submit('/documents/bulk', { _csrf: who.csrf, ids: [first!, second!], action, labels, return_to: '/documents' });
    await bob.get('/documents');
    const added = await bulk(bob, 'label', 'Web picked, web-two');
    expect(added.text).toContain('Labelled 2 documents “Web picked”, “web-two”.');
    expect(await labelsOf(first!)).toEqual(expect.arrayContaining(['Web picked', 'web-two']));
    expect(rowsOf((await bob.get('/documents?labels=web%20picked')).text)).toEqual([first!, second!].sort());
    // Carol views the project: her selection holds nothing she may change, and she is told why (#61 item 9).
    const carol = await loggedIn(d, lib.users.carol);
    await carol.get('/documents');
    expect((await bulk(carol, 'unlabel', 'Web picked')).text).toContain('where your role is viewer: this needs editor');
    expect(await labelsOf(first!)).toEqual(expect.arrayContaining(['Web picked']));
    await bob.get('/documents');
    const removed = await bulk(bob, 'unlabel', 'web picked,WEB-TWO');
    expect(removed.text).toContain('Took “web picked”, “WEB-TWO” off 2 documents.');
    expect(await labelsOf(first!)).toEqual(before);
  });

  it('keeps a project\'s labels on its Labels tab, labels one document on its page, and saves a search from the page (editors change, viewers see)', async () => {
    const shared = lib.projects.shared;
    const bob = await loggedIn(d, lib.users.bob);
    const carol = await loggedIn(d, lib.users.carol);
    const vocabulary = async () => (await api(d, `/api/v1/projects/${shared}/labels`, { token: lib.users.alice.apiKey })).body.labels as { id: string; name: string; color: string; document_count: number }[];
    const unpaid = (await vocabulary()).find((l) => l.name === 'unpaid')!;
    // Everyone who reads the project sees its labels with their counts; only editors get the forms.
    const tab = await carol.get(`/projects/${shared}/labels`);
    expect(tab.status).toBe(200);
    expect(tab.text).toContain(`<tr data-label-id="${unpaid.id}">`);
    expect(tab.text).toContain(`${unpaid.document_count} document${unpaid.document_count === 1 ? '' : 's'}<span class="visually-hidden"> labelled unpaid</span></a>`);
    expect(tab.text).not.toContain(`method="post" action="/projects/${shared}/labels`);
    // A label's count is a link to the Documents list narrowed by it, in its project.
    const countLink = new RegExp(`<a href="([^"]+)">${unpaid.document_count} documents?<span class="visually-hidden"> labelled unpaid</span></a>`).exec(tab.text);
    expect(countLink).not.toBeNull();
    const counted = [...(await carol.get(countLink![1]!.replaceAll('&amp;', '&'))).text.matchAll(/<tr data-document-id="([^"]+)"/g)].map((m) => m[1]!).sort();
    const inShared = want('carol', { labels: 'unpaid' }).filter((id) => lib.docs.find((x) => x.id === id)!.projectId === shared);
    expect(inShared.length).toBeGreaterThan(0);
    expect(inShared.length).toBeLessThan(want('carol', { labels: 'unpaid' }).length);
    expect(counted).toEqual(inShared);
    expect(counted).toHaveLength(unpaid.document_count);
    expect((await carol.submit(`/projects/${shared}/labels`, { _csrf: carol.csrf, name: 'Not hers' })).status).toBe(403);
    expect((await bob.get(`/projects/${shared}/labels`)).text).toContain(`action="/projects/${shared}/labels/${unpaid.id}"`);
    // Add, refuse a name taken in any case, rename and recolour.
    expect((await bob.submit(`/projects/${shared}/labels`, { _csrf: bob.csrf, name: 'Web vocab', color: 'teal' })).text).toContain('Added the label “Web vocab”.');
    const taken = await bob.submit(`/projects/${shared}/labels`, { _csrf: bob.csrf, name: 'web VOCAB', color: 'red' });
    expect(taken.status).toBe(409);
    expect(taken.text).toContain('has a label');
    const made = (await vocabulary()).find((l) => l.name === 'Web vocab')!;
    expect(made.color).toBe('teal');
    expect((await bob.submit(`/projects/${shared}/labels/${made.id}`, { _csrf: bob.csrf, name: 'Web renamed', color: 'red' })).text).toContain('Renamed “Web vocab” to “Web renamed”');
    expect((await vocabulary()).find((l) => l.id === made.id)).toMatchObject({ name: 'Web renamed', color: 'red', document_count: 0 });

    // The document page shows a document's labels to all who read it, and edits them for editors.
    const doc = lib.docs.find((x) => x.project === 'shared')!;
    const labelsOf = async () => ((await api(d, `/api/v1/documents/${doc.id}`, { token: lib.users.bob.apiKey })).body.labels as string[]).sort();
    const before = await labelsOf();
    const page = await bob.get(`/documents/${doc.id}`);
    expect(page.text).toContain(`action="/documents/${doc.id}/labels"`);
    expect(page.text).toContain(`value="${before.join(', ')}"`);
    const set = await bob.submit(`/documents/${doc.id}/labels`, { _csrf: bob.csrf, labels: [...before, 'web renamed'].join(', ') });
    expect(set.text).toMatch(/is labelled .*“web renamed”/);
    expect(await labelsOf()).toEqual([...before, 'Web renamed'].sort());
    // A script may send the names as a JSON array as well; the document then carries exactly those.
    const asJson = await bob.submit(`/documents/${doc.id}/labels`, { _csrf: bob.csrf, labels: JSON.stringify(['WEB RENAMED', ...before]) });
    expect(asJson.text).toMatch(/is labelled .*“WEB RENAMED”/);
    expect(await labelsOf()).toEqual([...before, 'Web renamed'].sort());
    expect(set.text).toMatch(/<dd class="doc-labels" id="doc-labels">[^]*?class="badge label-red" title="Documents labelled Web renamed"/);
    expect((await vocabulary()).find((l) => l.id === made.id)!.document_count).toBe(1);
    expect((await searchIds('carol', { labels: 'Web renamed' })).ids).toEqual([doc.id]);
    const hers = await carol.get(`/documents/${doc.id}`);
    expect(hers.text).toContain('title="Documents labelled Web renamed"');
    expect(hers.text).not.toContain(`action="/documents/${doc.id}/labels"`);
    expect((await carol.submit(`/documents/${doc.id}/labels`, { _csrf: carol.csrf, labels: '' })).status).toBe(403);
    // Nor through the API: refused, with the document's labels and the vocabulary as they were.
    for (const labels of [[], { add: ['carol was here'] }, { remove: ['web renamed'] }]) {
      const refused = await api(d, `/api/v1/documents/${doc.id}`, { method: 'PATCH', token: lib.users.carol.apiKey, body: { labels } });
      expect(refused.status, JSON.stringify(labels)).toBe(403);
    }
    expect(await labelsOf()).toEqual([...before, 'Web renamed'].sort());
    expect((await vocabulary()).some((l) => l.name === 'carol was here')).toBe(false);
    // Deleting asks first, naming how many documents it comes off.
    expect((await carol.get(`/projects/${shared}/labels/${made.id}/delete`)).status).toBe(403);
    expect((await bob.get(`/projects/${shared}/labels/${made.id}/delete`)).text).toContain('It comes off the 1 document that carries it');
    expect((await bob.submit(`/projects/${shared}/labels/${made.id}/delete`, { _csrf: bob.csrf })).text).toContain('Deleted the label “Web renamed”.');
    expect(await labelsOf()).toEqual(before);
    expect((await vocabulary()).some((l) => l.id === made.id)).toBe(false);

    // "Save this search" keeps the search the page shows (its filters too) under a name; sharing offers only the projects she edits.
    const results = await carol.get('/search?q=harbour&mode=keyword&labels=unpaid');
    // Above the results, below the filters in force.
    const at = (tag: string) => results.text.indexOf(tag);
    expect(at('<nav class="filter-panel"')).toBeGreaterThan(0);
    expect(at('<details class="save-search"')).toBeGreaterThan(at('<nav class="filter-panel"'));
    expect(at('<details class="save-search"')).toBeLessThan(at('<ol class="results"'));
    const form = /<form method="post" action="\/search\/save"[^]*?<\/form>/.exec(results.text)?.[0] ?? '';
    expect(form).toContain(`<option value="${lib.projects.carols}">`);
    expect(form).not.toContain(`<option value="${shared}">`);
    const fields = hiddenFields(results.text, '/search/save');
    expect(fields).toMatchObject({ q: 'harbour', mode: 'keyword', labels: 'unpaid' });
    const saved = await carol.submit('/search/save', { ...fields, name: 'Carol unpaid', share: '' });
    expect(saved.text).toContain('Saved “Carol unpaid”.');
    const link = /<a href="([^"]+)"><bdi>Carol unpaid<\/bdi><\/a>/.exec(saved.text);
    expect(link).not.toBeNull();
    const run = await carol.get(link![1]!.replaceAll('&amp;', '&'));
    const shown = [...run.text.matchAll(/<li class="result" data-document-id="([^"]+)"/g)].map((m) => m[1]!);
    const wanted = want('carol', { labels: 'unpaid' });
    expect(shown.length).toBe(Math.min(20, wanted.length));
    expect(wanted).toEqual(expect.arrayContaining(shown));
    expect((await carol.submit('/search/save', { ...fields, name: 'carol UNPAID' })).text).toContain('Not saved: you have a saved search named');
    expect((await carol.submit('/search/save', { ...fields, name: 'Carol shares', share: shared })).status).toBe(403);
    const mine = (await api(d, '/api/v1/saved-searches', { token: lib.users.carol.apiKey })).body.saved_searches as { id: string; name: string; search: Record<string, unknown> }[];
    const kept = mine.find((v) => v.name === 'Carol unpaid')!;
    expect(kept.search).toMatchObject({ query: 'harbour', mode: 'keyword', filters: { labels: 'unpaid' } });
    expect((await api(d, `/api/v1/saved-searches/${kept.id}`, { method: 'DELETE', token: lib.users.carol.apiKey })).status).toBe(204);
  });

  it('completes filter values on TAB: types, the labels and metadata keys the caller reads, saved searches', async () => {
    const complete = async (...words: string[]) => {
      const res = await runCli(['__complete', ...words], { env: cliEnv(null, { DOCSEARCH_URL: d.url, DOCSEARCH_TOKEN: lib.users.carol.apiKey }) });
      expect(res.code, res.stderr).toBe(0);
      return res.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0]);
    };
    expect(await complete('search', 'x', '--type', 'p')).toEqual(expect.arrayContaining(['pdf', 'pptx']));
    const labelsIn = (readable: boolean) => new Set(lib.docs.filter((doc) => [lib.projects.shared, lib.projects.carols].includes(doc.projectId) === readable).flatMap((doc) => doc.labels.map((l) => l.toLowerCase())));
    expect(labelsIn(false).size).toBeGreaterThan(0);
    const offered = (await complete('documents', 'list', '--label', '')).map((l) => l!.toLowerCase());
    // Hers all (earlier tests may have added more to these projects' vocabularies); one only Eve's project has, not.
    expect(offered).toEqual(expect.arrayContaining([...labelsIn(true)]));
    expect((await api(d, `/api/v1/projects/${lib.projects.eves}/labels`, { token: lib.users.eve.apiKey, body: { name: 'eve only' } })).status).toBe(201);
    const again = (await complete('documents', 'list', '--label', '')).map((l) => l!.toLowerCase());
    expect(again).toEqual(expect.arrayContaining(offered));
    expect(again).not.toContain('eve only');
    expect(await complete('search', 'x', '--meta', 'te')).toEqual(['team=']);
    expect((await api(d, '/api/v1/saved-searches', { token: lib.users.carol.apiKey, body: { name: 'tab pick', search: { query: 'harbour' } } })).status).toBe(201);
    expect((await api(d, '/api/v1/saved-searches', { token: lib.users.eve.apiKey, body: { name: 'tab hidden', search: { query: 'harbour' } } })).status).toBe(201);
    const saved = await complete('search', '--saved', 'tab');
    expect(saved).toEqual(['tab pick']); // not eve's
  });
});
