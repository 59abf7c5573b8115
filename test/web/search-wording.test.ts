import { describe, expect, it } from 'vitest';
import type { DocumentsResponse } from '../../src/search/service.js';
import { searchPage } from '../../src/web/pages/search.js';

/**
 * Issue #44 item 11: what the search page says about its counts, from answers shaped as the service gives them
 * (a `gte` total on the last page, a document all of whose passages rank). The pages are pure functions.
 */
const base = { user: { email: 'ada@example.com' }, csrfToken: 't', q: 'tides', mode: 'hybrid' as const, view: 'documents' as const, projectId: '', projects: [], floor: 0.35 };

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

  it('a passage under the relevance floor that holds at most half the query’s words says it is a weak match (#62 item 5)', () => {
    const one = (similarity: number, text: string) => {
      const r = response({ docs: 1, total: { value: 1, relation: 'eq' } });
      r.documents[0]!.passages = [{ chunk_id: 'doc_0:3', score: 1, scores: { vector: { rank: 1, similarity } }, text, snippet: text, highlights: [] }];
      return searchPage({ ...base, q: 'per diem rates', response: r, start: 0 }).value;
    };
    // Matched only "per", not close in meaning: weak.
    expect(one(0.2, 'Fees are charged per night at the harbour.')).toContain('weak match');
    // Close in meaning, or holding most of the words: not weak.
    expect(one(0.6, 'Fees are charged per night at the harbour.')).not.toContain('weak match');
    expect(one(0.2, 'The per diem rates for travel are set each year.')).not.toContain('weak match');
  });

  it('each passage has one link, "Open at this passage": the viewer at the passage, or the document page for a PDF', () => {
    const r = response({ docs: 2, total: { value: 2, relation: 'eq' } });
    const text = 'Berths are assigned daily. High tide at six.';
    r.documents[0]!.document.content_type = 'text/csv';
    r.documents[0]!.passages = [{ chunk_id: 'doc_0:7', score: 1, scores: {} as never, text, snippet: 'High tide at six.', highlights: [], page_start: 4 }];
    r.documents[1]!.document.content_type = 'application/pdf';
    r.documents[1]!.passages = [{ chunk_id: 'doc_1:2', score: 1, scores: {} as never, text, snippet: 'High tide at six.', highlights: [], page_start: 3 }];
    const page = searchPage({ ...base, response: r, start: 0 }).value;
    expect([...page.matchAll(/<a href="([^"]+)" class="at-match">([^<]+)</g)].map((m) => [m[1], m[2]])).toEqual([
      ['/documents/doc_0/view?chunk=7&amp;answer=27-44#passage', 'Open at this passage'],
      ['/documents/doc_1?chunk=2&amp;answer=27-44&amp;page=3#chunk-2', 'Open at this passage'],
    ]);
    expect(page).not.toContain('View it');
    expect(page).not.toContain('Open the original');
  });
});
