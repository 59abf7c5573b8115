import { describe, expect, it } from 'vitest';
import type { DocumentsResponse } from '../../src/search/service.js';
import { searchPage } from '../../src/web/pages/search.js';

/**
 * Issue #44 item 11: what the search page says about its counts, from answers shaped as the service gives them
 * (a `gte` total on the last page, a document all of whose passages rank). The pages are pure functions.
 */
const base = { user: { email: 'ada@example.com' }, csrfToken: 't', q: 'tides', mode: 'hybrid' as const, view: 'documents' as const, projectId: '', projects: [] };

function response(over: Partial<DocumentsResponse> & { docs: number; matches?: number }): DocumentsResponse {
  const { docs, matches = 1, ...rest } = over;
  return {
    query: 'tides',
    took_ms: 1,
    total: { value: docs, relation: 'gte' },
    weak: false,
    next_cursor: null,
    indexing: 0,
    documents: Array.from({ length: docs }, (_, i) => ({
      document: { id: `doc_${i}`, filename: `tide-${i}.txt`, content_type: 'text/plain' },
      project: { id: 'prj_1', name: 'default' },
      score: 1,
      matches,
      passages: [{ chunk_id: `c${i}`, score: 1, scores: {} as never, text: 'High tide at six.', snippet: 'High tide at six.', highlights: [] }],
    })),
    ...rest,
  };
}

const text = (html: string) => html.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');

describe('the search page’s counts (#44 item 11)', () => {
  it('the last page says how many there are, not "at least" what it shows', () => {
    const page = text(searchPage({ ...base, response: response({ docs: 4 }), start: 0 }).value);
    expect(page).toContain('1–4 of 4 documents for “tides”');
    expect(page).not.toContain('at least');
  });

  it('with pages beyond, a floor above the page is "at least"; a floor the page reaches is "more than"', () => {
    expect(text(searchPage({ ...base, response: response({ docs: 2, total: { value: 40, relation: 'gte' }, next_cursor: 'c' }), start: 0 }).value)).toContain(
      '1–2 of at least 40 documents',
    );
    expect(text(searchPage({ ...base, response: response({ docs: 2, total: { value: 2, relation: 'gte' }, next_cursor: 'c' }), start: 0 }).value)).toContain(
      '1–2 of more than 2 documents',
    );
  });

  it('a document with many passages in the results says so, not "N matching passages"', () => {
    const page = text(searchPage({ ...base, response: response({ docs: 1, matches: 110, total: { value: 1, relation: 'eq' } }), start: 0 }).value);
    expect(page).not.toContain('matching passages');
    expect(page).toContain('110 passages of it in the results; the best one is shown');
  });

  it('a document whose passages are all shown does not say "shown"; with more than shown, it says how many are', () => {
    const all = response({ docs: 1, matches: 3, total: { value: 1, relation: 'eq' } });
    const three = all.documents[0]!.passages[0]!;
    all.documents[0]!.passages = [three, { ...three, chunk_id: 'c1' }, { ...three, chunk_id: 'c2' }];
    expect(text(searchPage({ ...base, response: all, start: 0 }).value)).toContain('3 passages of it in the results ');
    expect(text(searchPage({ ...base, response: all, start: 0 }).value)).not.toContain('shown');
    all.documents[0]!.matches = 10;
    expect(text(searchPage({ ...base, response: all, start: 0 }).value)).toContain('10 passages of it in the results; the best 3 are shown');
  });

  it('each result of a weak answer is marked as a weak match', () => {
    const page = searchPage({ ...base, response: response({ docs: 3, weak: true }), start: 0 }).value;
    expect(page.match(/class="badge weak-label">weak match</g)).toHaveLength(3);
  });
});
