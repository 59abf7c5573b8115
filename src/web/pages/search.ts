import { shownHeading } from '../../core/passage-heading.js';
import { citationLabel } from '../../core/citation-label.js';
import { maxlengthFor } from '../../core/code-points.js';
import { MAX_LABEL_CHARS } from '../../core/label-name.js';
import { MAX_NAME_CHARS } from '../../core/name-limits.js';
import { foldAscii } from '../../core/name-order.js';
import { metadataParamParts } from '../../core/filter-params.js';
import { MAX_QUERY_CHARS } from '../../core/search-limits.js';
import { MAX_FACET_VALUES } from '../../search/facets.js';
import { SEARCH_MODES, type SearchMode } from '../../search/query.js';
import type { DocumentRef, DocumentResult, SearchPassage, SearchResponse, SearchResult } from '../../search/service.js';
import { answerRange } from '../../core/excerpt.js';
import { filterTypeName, languageName, pageSpan } from '../format.js';
import { displayName, withoutDirectionalControls } from '../display-text.js';
import { type Html, html } from '../html.js';
import { snippet, weakPassage } from '../snippet.js';
import { confirmPage } from './confirm.js';
import { layout, SLASH_SHORTCUT } from './layout.js';
import { forRow } from './row-action.js';

/** How results are shown: one entry per document (the default) or every passage in rank order. */
export type SearchView = 'documents' | 'passages';

export interface SearchPageData {
  user: { email: string };
  csrfToken: string;
  q: string;
  mode: SearchMode;
  view: SearchView;
  /** The project filter ('' for all projects, or for several: `projectIds`). */
  projectId: string;
  /** The projects searched when the address names several (a saved search of several projects); each kept in the page's links. */
  projectIds?: string[];
  projects: { id: string; name: string }[];
  /** The one document searched (`document=`: the passages of a grouped result beyond the few it shows). */
  document?: { id: string; filename: string };
  /** Undefined before a query was asked. */
  response?: SearchResponse;
  /** 0-based index of the page's first result. */
  start?: number;
  previousCursor?: string | null;
  /** The embedder's relevance floor (search/floor.ts): a passage under it that holds few of the query's words is a weak match. */
  floor: number | null;
  /** No document in any project yet: the page says so and leads to the upload. */
  libraryEmpty?: boolean;
  /** The filters as the URL carries them (GET /api/v1/documents' parameters: `type=pdf`, `labels=unpaid` …), in order. */
  filterParams?: [string, string][];
  /** The person's saved searches and those shared with them, as links; with Rename and Delete… where access allows them (their own). */
  savedSearches?: { id: string; name: string; href: string; shared: boolean; renamable: boolean; deletable: boolean }[];
  /** A saved search's Rename refused: the name as typed stays in its field, open, with why. */
  renaming?: { id: string; name: string; error: string };
  /** Save this search refused: the form open again with the name and project as chosen, and why. */
  saving?: { name: string; share: string; error: string };
  /** The projects the user edits, with which the Save form may share the search. */
  shareable?: { id: string; name: string }[];
  error?: string;
}

const MODE_LABELS: Record<SearchMode, string> = { hybrid: 'Hybrid (meaning + words)', vector: 'Meaning only', keyword: 'Words only' };
const VIEW_LABELS: Record<SearchView, string> = { documents: 'Documents', passages: 'Passages' };

/** Types whose viewer draws the document itself no better than the document page does (pages as images): a PDF, an image. */
const NO_VIEWER = /^(application\/pdf|image\/)/;

/**
 * "Open at this passage": the one place a passage opens. The viewer (`/view`), scrolled to the passage with its answer
 * marked; for a type without one (a PDF, an image) the document page, at the passage's page, its chunk unfolded and
 * marked. `chunk` names the passage and `answer` the answer's [start, end) in its text, so the page marks exactly the
 * sentence the result showed.
 */
export function openHref(doc: Pick<DocumentRef, 'id' | 'content_type'>, p: Pick<SearchPassage, 'chunk_id' | 'page_start' | 'text' | 'snippet' | 'highlights'>): string {
  const chunk = p.chunk_id.slice(p.chunk_id.lastIndexOf(':') + 1);
  const answer = answerRange(p.text, p.snippet || undefined, p.highlights);
  const params = new URLSearchParams({ chunk });
  if (answer) params.set('answer', `${answer[0]}-${answer[1]}`);
  const id = encodeURIComponent(doc.id);
  if (NO_VIEWER.test(doc.content_type)) {
    if (p.page_start !== undefined) params.set('page', String(p.page_start));
    return `/documents/${id}?${params.toString()}#chunk-${chunk}`;
  }
  return `/documents/${id}/view?${params.toString()}#passage`;
}

const number = (n: number) => n.toLocaleString('en');
const plural = (n: number, one: string, many: string) => `${number(n)} ${n === 1 ? one : many}`;

/** What a passage cites: "p. 3", "slide 2", "rows 4–9 · Berths", "chapter 3" (page numbers where no citation came). */
function cites(p: SearchPassage): string | null {
  return p.citation ? citationLabel(p.citation) : pageSpan(p.page_start, p.page_end);
}

/**
 * "p. 3 · Part II > Expenses", "rows 4–9 · Berths": where a passage sits in its document (a sheet is said once), and
 * whether it is only a weak match.
 */
function where(p: SearchPassage, weak: boolean): Html | null {
  const cited = cites(p);
  const heading = shownHeading(p);
  const parts = [cited ? html`<span class="page">${cited}</span>` : null, heading ? html`<bdi class="heading">${withoutDirectionalControls(heading)}</bdi>` : null].filter((x) => x !== null);
  if (!parts.length && !weak) return null;
  return html`<p class="meta">${parts.map((x, i) => (i ? html` · ${x}` : x))}${p.ocr ? html` · OCR` : null}${weak ? html` <span class="badge weak-label">weak match</span>` : null}</p>`;
}

function passageBody(p: SearchPassage, doc: DocumentRef, q: string, weak: boolean): Html {
  return html`${where(p, weak)}<p class="snippet" dir="auto">${snippet(p, q)}</p>
  <p class="links"><a href="${openHref(doc, p)}" class="at-match">Open at this passage</a></p>`;
}

function docMeta(doc: DocumentRef, project: { id: string; name: string }, extra: Html | null): Html {
  return html`<p class="meta"><a href="/projects/${project.id}" class="project">${project.name}</a>${doc.path ? html` · <span class="path">${doc.path}</span>` : null}${extra}</p>`;
}

/** On the result of a weak answer, or a document whose passages are all weak: it is only near, not a match. */
const weakLabel = (weak: boolean) => (weak ? html` <span class="badge weak-label">weak match</span>` : null);

function passageResult(r: SearchResult, page: SearchPageData, weak: boolean): Html {
  const thin = !weak && weakPassage(r, page.q, page.floor);
  return html`<li class="result" data-document-id="${r.document.id}">
  <h2><a href="${openHref(r.document, r)}" class="filename">${r.document.filename}</a>${weakLabel(weak)}</h2>
  ${docMeta(r.document, r.project, null)}
  ${passageBody(r, r.document, page.q, thin)}
</li>`;
}

function documentResult(d: DocumentResult, page: SearchPageData, weak: boolean): Html {
  const q = page.q;
  // Not "matching": in meaning mode every passage of a document can rank; this is how many of its passages the results hold.
  // The API gives a document's best few passages, not all it counts: say how many of them are shown, and link to the rest.
  const shown = d.passages.length;
  const some = shown < d.matches ? `; the best ${shown === 1 ? 'one is' : `${number(shown)} are`} shown` : '';
  const rest = shown < d.matches ? html` · <a href="${documentSearchHref(page, d.document.id)}" class="all-passages">Show all its passages</a>` : null;
  const more = !weak && d.matches > 1 ? html` · <span class="matches">${plural(d.matches, 'passage', 'passages')} of it in the results${some}</span>${rest}` : null;
  const thin = d.passages.map((p) => !weak && weakPassage(p, q, page.floor));
  const allThin = thin.length > 0 && thin.every((t) => t);
  return html`<li class="result" data-document-id="${d.document.id}">
  <h2><a href="${d.passages[0] ? openHref(d.document, d.passages[0]) : `/documents/${d.document.id}`}" class="filename">${d.document.filename}</a>${weakLabel(weak || allThin)}</h2>
  ${docMeta(d.document, d.project, more)}
  <ol class="passages">${d.passages.map((p, i) => html`<li class="passage-result">${passageBody(p, d.document, q, thin[i]! && !allThin)}</li>`)}</ol>
</li>`;
}

/** The projects the search is narrowed to: one, several, or none (all). */
const searchedProjects = (d: Pick<SearchPageData, 'projectId' | 'projectIds'>): string[] => (d.projectIds?.length ? d.projectIds : d.projectId ? [d.projectId] : []);

/** The search's own parameters: query, project, mode, filters. */
function searchParams(d: SearchPageData, filterParams: [string, string][] = d.filterParams ?? []): URLSearchParams {
  const params = new URLSearchParams({ q: d.q });
  for (const id of searchedProjects(d)) params.append('project', id);
  if (d.mode !== 'hybrid') params.set('mode', d.mode);
  for (const [k, v] of filterParams) params.append(k, v);
  if (d.view !== 'documents' && !d.document) params.set('view', d.view);
  return params;
}

/** How a filter's value reads on the page: a type and a language by name, as the other pages write them ("Text", "French (fr)"), else as given. */
const SHOWN_VALUES: Record<string, (value: string) => string> = { type: filterTypeName, language: languageName };
const shownValue = (param: string, value: string): string => SHOWN_VALUES[param]?.(value) ?? value;

/** The facets the page counts, what each is called, and the filter parameters a value of it narrows to. */
export const PAGE_FACETS: { facet: string; title: string; narrow: (value: string) => [string, string][] }[] = [
  { facet: 'type', title: 'Type', narrow: (v) => [['type', v]] },
  { facet: 'label', title: 'Label', narrow: (v) => [['labels', v]] },
  { facet: 'year', title: 'Uploaded', narrow: (v) => [['uploaded_since', `${v}-01-01`], ['uploaded_before', `${Number(v) + 1}-01-01`]] },
  { facet: 'uploaded_by', title: 'Uploaded by', narrow: (v) => [['uploaded_by', v]] },
  { facet: 'language', title: 'Language', narrow: (v) => [['language', v]] },
];

const PARAM_TITLES: Record<string, string> = { type: 'Type', labels: 'Label', uploaded_since: 'Since', uploaded_before: 'Before', uploaded_by: 'By', language: 'Language', path_prefix: 'Path', source_id: 'Source' };

/** The search narrowed by one more value: its parameters added (one that takes a single value replaces it; labels add up). */
function narrowedHref(d: SearchPageData, add: [string, string][]): string {
  const names = new Set(add.map(([k]) => k).filter((k) => k !== 'labels'));
  return `/search?${searchParams(d, [...(d.filterParams ?? []).filter(([k]) => !names.has(k)), ...add]).toString()}`;
}

/** Values of a facet, and saved searches, in sight before their "N more". */
const IN_SIGHT = 10;

/** The first IN_SIGHT items, the rest folded under "N more": each still there without script, none out of reach. */
const folded = (items: Html[], more: string, open = false): Html => {
  const rest = items.slice(IN_SIGHT);
  return html`<ul>${items.slice(0, IN_SIGHT)}</ul>${rest.length ? html`<details class="${more}"${open ? html` open` : null}><summary>${number(rest.length)} more</summary><ul>${rest}</ul></details>` : null}`;
};

/** How metadata bounds read: as a person writes them (the dates among them read "after" and "before" alike). */
const BOUNDS: Record<string, string> = { $gt: '>', $gte: '≥', $lt: '<', $lte: '≤' };

/** "ops", "ops or dev", "ops, dev or qa". */
const anyOf = (values: readonly string[]): string => (values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`);

/** One metadata condition as a person reads it ("year ≥ 2020", "team: ops or dev", "has year", "no year"); null for one the filter language has not. */
function metadataCondition(key: string, op: string, value: unknown): string | null {
  if (!key) return null;
  const scalar = (x: unknown) => (x === null || ['string', 'number', 'boolean'].includes(typeof x) ? String(x) : null);
  if (op === '$eq') return scalar(value) === null ? null : `${key}: ${scalar(value)}`;
  if (op === '$in') return Array.isArray(value) && value.length && value.every((x) => scalar(x) !== null) ? `${key}: ${anyOf(value.map(String))}` : null;
  if (Object.hasOwn(BOUNDS, op)) return typeof value === 'string' || typeof value === 'number' ? `${key} ${BOUNDS[op]} ${value}` : null;
  if (op === '$exists') return typeof value === 'boolean' ? (value ? `has ${key}` : `no ${key}`) : null;
  return null;
}

/**
 * A metadata filter as a person reads it: `metadata.year.$gte=2020` "year ≥ 2020", `metadata.team=ops` "team: ops",
 * the JSON object (a saved search's, where the shorthand would not mean the same) each of its conditions so. Null
 * for what is no metadata filter or none the filter language reads (the page shows its error): then as given.
 */
function metadataText(param: string, value: string): string | null {
  if (param.startsWith('metadata.')) {
    // A text value, so `$in` is comma-separated.
    const [key, op] = metadataParamParts(param);
    const typed = op === '$in' ? value.split(',') : op === '$exists' ? ({ true: true, false: false } as Record<string, boolean>)[value] : value;
    return metadataCondition(key, op, typed);
  }
  if (param !== 'metadata') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || Object.keys(parsed).length === 0) return null;
  const read = Object.entries(parsed).flatMap(([key, c]) =>
    c !== null && typeof c === 'object' && !Array.isArray(c) ? Object.entries(c).map(([op, x]) => metadataCondition(key, op, x)) : [metadataCondition(key, '$eq', c)],
  );
  return read.length && read.every((x) => x !== null) ? read.join('; ') : null;
}

/** A label in a label's colour, as the Documents list shows it. */
const coloured = (name: string, color: string): Html => html`<span class="doc-labels"><bdi class="badge label-${color}">${name}</bdi></span>`;

/**
 * A facet counts its most frequent values only (MAX_FACET_VALUES): past them, a label is reached by its name, the
 * search's own parameters kept (a form without script, as the facet's links).
 */
function otherLabel(d: SearchPageData): Html {
  return html`<form method="get" action="/search" class="inline-field">${[...searchParams(d)].map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
    <label>Other label <input type="text" name="labels" required maxlength="${maxlengthFor(MAX_LABEL_CHARS)}" size="12"></label>
    <button type="submit" class="small">Narrow</button>
  </form>`;
}

/** Each filter in force as a chip whose link is the search without it; the facet counts as links that narrow it. */
function filterPanel(d: SearchPageData): Html | null {
  const given = d.filterParams ?? [];
  const facets = d.response?.facets ?? {};
  // A label's colour, from the label facet (a label in force is among its values when anything was found).
  const colours = new Map((facets.label ?? []).flatMap((v) => (v.color ? [[foldAscii(String(v.value)), v.color] as const] : [])));
  // The Uploaded facet's year is two parameters (its first day, the next year's): one chip, which removes both.
  const since = given.findIndex(([k, v]) => k === 'uploaded_since' && /^\d{4}-01-01$/.test(v));
  const year = since >= 0 ? given[since]![1].slice(0, 4) : '';
  const before = since >= 0 ? given.findIndex(([k, v]) => k === 'uploaded_before' && v === `${Number(year) + 1}-01-01`) : -1;
  const chips = given.flatMap(([k, v], i) => {
    if (i === before) return [];
    const wholeYear = i === since && before >= 0;
    const title = wholeYear ? 'Uploaded' : (PARAM_TITLES[k] ?? k);
    const without = `/search?${searchParams(d, given.filter((_, j) => j !== i && !(wholeYear && j === before))).toString()}`;
    const shown = wholeYear ? year : shownValue(k, v);
    const colour = k === 'labels' ? colours.get(foldAscii(v.trim())) : undefined;
    // The link says what it removes in the words the chip shows.
    const text = metadataText(k, v) ?? `${title}: ${shown}`;
    const body = colour ? html`${title}: ${coloured(shown, colour)}` : html`<bdi>${text}</bdi>`;
    return html`<li><a class="chip" href="${without}" aria-label="Remove the filter ${text}">${body} <span aria-hidden="true">×</span></a></li>`;
  });
  // A label in force is matched in any case of A–Z, as the filter matches it (`labels=DRAFT` is the label "draft").
  const key = (k: string, v: string) => `${k}=${k === 'labels' ? foldAscii(v) : v}`;
  const active = new Set(given.map(([k, v]) => key(k, v)));
  const groups = PAGE_FACETS.map(({ facet, title, narrow }) => {
    const values = (facets[facet] ?? []).filter((v) => v.value !== null && !narrow(String(v.value)).every(([k, x]) => active.has(key(k, x))));
    if (values.length === 0) return null;
    const item = (v: (typeof values)[number]) => {
      const shown = shownValue(facet, String(v.value));
      return html`<li><a href="${narrowedHref(d, narrow(String(v.value)))}">${v.color ? coloured(shown, v.color) : html`<bdi>${shown}</bdi>`} <span class="count">${number(v.count)}</span></a></li>`;
    };
    // The most frequent few in sight; the rest folded, still each a link.
    return html`<div class="facet" data-facet="${facet}"><h3>${title}</h3>${folded(values.map(item), 'facet-more')}${facet === 'label' && (facets.label?.length ?? 0) >= MAX_FACET_VALUES ? otherLabel(d) : null}</div>`;
  }).filter((g) => g !== null);
  if (chips.length === 0 && groups.length === 0) return null;
  return html`<nav class="filter-panel" aria-label="Narrow the results">
  ${chips.length ? html`<ul class="chips" aria-label="Filters in force">${chips}</ul>` : null}
  ${groups.length ? html`<div class="facets">${groups}</div>` : null}
</nav>`;
}

/** This page's address (without its page cursor): where the sidebar's forms come back to. */
function here(d: SearchPageData): string {
  if (!d.q) return '/search';
  const params = searchParams(d);
  if (d.document) params.set('document', d.document.id);
  return `/search?${params.toString()}`;
}

/** An own saved search's Rename (a small form, folded) and Delete… (which asks first, on a page of its own), each where it is allowed. */
function savedActions(d: SearchPageData, v: { id: string; name: string; renamable: boolean; deletable: boolean }, back: string): Html | null {
  if (!v.renamable && !v.deletable) return null;
  const refused = d.renaming?.id === v.id ? d.renaming : null;
  const rename = html`<details class="rename"${refused ? html` open` : null}><summary class="button small">${forRow('Rename', v.name)}</summary>
    <form method="post" action="/search/saved/${v.id}/rename" class="inline-field">
      <input type="hidden" name="_csrf" value="${d.csrfToken}"><input type="hidden" name="back" value="${back}">
      <label class="visually-hidden" for="rename-${v.id}">New name for ${v.name}</label>
      <input id="rename-${v.id}" type="text" name="name" maxlength="${maxlengthFor(MAX_NAME_CHARS)}" required value="${refused ? refused.name : v.name}">
      <button type="submit" class="small">${forRow('Save', v.name)}</button>
    </form>
  </details>`;
  const remove = html`<a href="/search/saved/${v.id}/delete?back=${encodeURIComponent(back)}" class="button danger small">${forRow('Delete…', v.name)}</a>`;
  return html`<div class="actions">${v.renamable ? rename : null}${v.deletable ? remove : null}</div>`;
}

function savedList(d: SearchPageData): Html | null {
  if (!d.savedSearches?.length) return null;
  const back = here(d);
  // A team's hundreds would stand between the search and its results: the first few in sight (open where one's rename was refused).
  const renaming = d.savedSearches.findIndex((v) => v.id === d.renaming?.id);
  return html`<nav class="saved-searches" aria-label="Saved searches"><h2>Saved searches</h2>${folded(
    d.savedSearches.map((v) => html`<li><a href="${v.href}"><bdi>${v.name}</bdi></a>${v.shared ? html` <span class="badge">shared</span>` : null}${savedActions(d, v, back)}</li>`),
    'saved-more',
    renaming >= IN_SIGHT,
  )}${d.renaming ? html`<p class="error" role="alert">${d.renaming.error}</p>` : null}</nav>`;
}

/** Deleting a saved search asks first: only the name and the search it keeps go; those it is shared with no longer see it. */
export function savedSearchDeletePage(d: { user: { email: string }; csrfToken: string; saved: { id: string; name: string; shared: boolean }; back: string }) {
  return confirmPage({
    user: d.user,
    csrfToken: d.csrfToken,
    active: 'search',
    title: `Delete the saved search “${d.saved.name}”?`,
    body: html`<p>Only the name and the search it keeps go: no document changes.${d.saved.shared ? ' The members of the project it is shared with no longer see it.' : ''}</p>`,
    action: `/search/saved/${d.saved.id}/delete`,
    fields: { back: d.back },
    confirm: 'Delete saved search',
    cancel: d.back,
  });
}

/** "Save this search": a name, and optionally a project whose members see it too; the search itself as hidden fields. */
function saveForm(d: SearchPageData): Html | null {
  if (!d.response || d.document) return null;
  const hidden = [...searchParams(d).entries()];
  const refused = d.saving;
  return html`<details class="save-search" id="save-search"${refused ? html` open` : null}><summary>Save this search</summary>
  <form method="post" action="/search/save" class="row-form">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    ${hidden.map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
    <label class="grow">Name <input type="text" name="name" required maxlength="${maxlengthFor(MAX_NAME_CHARS)}" value="${refused ? refused.name : d.q}" aria-describedby="save-name-hint"${refused ? html` aria-invalid="true"` : null}><span class="hint" id="save-name-hint">It appears under Saved searches; <code>docsearch search --saved NAME</code> runs it too.</span></label>
    ${refused ? html`<p class="error" role="alert">${refused.error}</p>` : null}
    <label>Share with <select name="share"><option value="">Only me</option>${(d.shareable ?? []).map(
      (p) => html`<option value="${p.id}"${refused?.share === p.id ? html` selected` : null}>${p.name} (its members)</option>`,
    )}</select></label>
    <button type="submit">Save search</button>
  </form>
</details>`;
}

/** The link to another page of the same search. */
function pageHref(d: SearchPageData, cursor: string): string {
  const params = searchParams(d);
  if (d.document) params.set('document', d.document.id);
  params.set('cursor', cursor);
  return `/search?${params.toString()}`;
}

/** The same search within one document, passage by passage; without `documentId`, across the library again. */
function documentSearchHref(d: SearchPageData, documentId?: string): string {
  const params = searchParams(d);
  if (documentId) {
    params.delete('view');
    params.set('document', documentId);
  }
  return `/search?${params.toString()}`;
}

/** What the page says about its results: the range shown, how many there are (only as far as known), or why none. */
function summary(d: SearchPageData, res: SearchResponse, shown: number): Html {
  const unit = d.view === 'documents' ? (['document', 'documents'] as const) : (['passage', 'passages'] as const);
  const within = d.document ? html` of <bdi class="filename">${displayName(d.document.filename)}</bdi>` : null;
  if (res.weak) {
    return html`<p class="notice weak" role="status">No close matches for “${d.q}”: nothing contains its words, and nothing is close in meaning. These are the nearest ${unit[1]}, probably not what you are looking for.</p>`;
  }
  if (shown === 0) {
    if ((d.start ?? 0) > 0) return html`<p class="muted" role="status">No more ${unit[1]}${within} for “${d.q}”.</p>`;
    // Only the ways out this search has: all projects when it is narrowed to some, fewer filters when it has any.
    const filters = d.filterParams?.length ?? 0;
    const ways = ['other words', 'another mode', ...(searchedProjects(d).length ? ['all projects'] : []), ...(filters ? [filters === 1 ? 'without the filter (its × below)' : 'fewer filters (each has its × below)'] : [])];
    const tried = ways.length === 2 ? ways.join(' or ') : `${ways.slice(0, -1).join(', ')}, or ${ways.at(-1)}`;
    return html`<p class="muted" role="status">No passages${within} match “${d.q}”${filters ? (filters === 1 ? ' with this filter' : ' with these filters') : ''}. Try ${tried}.</p>`;
  }
  const first = (d.start ?? 0) + 1;
  const last = (d.start ?? 0) + shown;
  // The last page knows the total exactly; "at least" only while there are pages beyond and the count is a floor above them.
  const exact = res.total.relation === 'eq' || !res.next_cursor;
  const value = exact && res.total.relation !== 'eq' ? last : res.total.value;
  const total = exact ? number(value) : value > last ? `at least ${number(value)}` : `more than ${number(last)}`;
  return html`<p class="muted range" role="status">${number(first)}–${number(last)} of ${total} ${exact && value === 1 ? unit[0] : unit[1]}${within} for “${d.q}”</p>`;
}

function pager(d: SearchPageData, res: SearchResponse): Html | null {
  if (!d.previousCursor && !res.next_cursor) return null;
  return html`<nav class="pager" aria-label="Result pages">
  ${d.previousCursor ? html`<a href="${pageHref(d, d.previousCursor)}" rel="prev">Previous</a>` : null}
  ${res.next_cursor ? html`<a href="${pageHref(d, res.next_cursor)}" rel="next">Next</a>` : null}
</nav>`;
}

function results(d: SearchPageData): Html | null {
  const res = d.response;
  if (!res) return null;
  const list =
    'documents' in res
      ? res.documents.length
        ? html`<ol class="results" start="${(d.start ?? 0) + 1}">${res.documents.map((x) => documentResult(x, d, res.weak))}</ol>`
        : null
      : res.results.length
        ? html`<ol class="results" start="${(d.start ?? 0) + 1}">${res.results.map((x) => passageResult(x, d, res.weak))}</ol>`
        : null;
  const shown = 'documents' in res ? res.documents.length : res.results.length;
  const indexing = res.indexing
    ? html`<p class="notice indexing" role="status">Still indexing ${plural(res.indexing, 'document', 'documents')}: results may be incomplete until ${res.indexing === 1 ? 'it is' : 'they are'} ready.</p>`
    : null;
  const back = d.document ? html`<p class="back"><a href="${documentSearchHref(d)}">Search all documents for “${d.q}”</a></p>` : null;
  return html`${indexing}${(res.warnings ?? []).map((w) => html`<p class="notice" role="status">${w}</p>`)}${summary(d, res, shown)}${back}${filterPanel(d)}${saveForm(d)}${list}${pager(d, res)}`;
}

export function searchPage(d: SearchPageData) {
  return layout(
    { title: d.q ? `${d.q} – Search` : 'Search', user: d.user, csrfToken: d.csrfToken, active: 'search' },
    html`<section class="card">
  <h1>Search your library</h1>
  <form method="get" action="/search" class="search" role="search">
    <label class="grow">Search for <input type="search" name="q" value="${d.q}" maxlength="${maxlengthFor(MAX_QUERY_CHARS)}" ${SLASH_SHORTCUT} required autofocus></label>
    <label>Project <select name="project"${(d.projectIds?.length ?? 0) > 1 ? html` multiple` : null}>
      <option value="">All projects</option>
      ${d.projects.map((p) => html`<option value="${p.id}"${searchedProjects(d).includes(p.id) ? html` selected` : null}>${p.name}</option>`)}
    </select></label>
    <label>Mode <select name="mode">
      ${SEARCH_MODES.map((m) => html`<option value="${m}"${m === d.mode ? html` selected` : null}>${MODE_LABELS[m]}</option>`)}
    </select></label>
    ${
      d.document
        ? html`<input type="hidden" name="document" value="${d.document.id}">`
        : html`<label>Show <select name="view">
      ${(['documents', 'passages'] as const).map((v) => html`<option value="${v}"${v === d.view ? html` selected` : null}>${VIEW_LABELS[v]}</option>`)}
    </select></label>`
    }
    ${(d.filterParams ?? []).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
    <button type="submit" class="primary">Search</button>
  </form>
  ${savedList(d)}
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>${filterPanel(d)}` : null}
  ${
    d.libraryEmpty
      ? html`<p class="notice" id="empty-library" role="status">Your library is empty: there is nothing to search yet. <a href="/documents#upload">Upload documents</a> and search finds them once they are indexed.</p>`
      : results(d)
  }
</section>`,
  );
}
