import { type CitationUnit, unitHeading } from '../../core/citation-label.js';
import { withoutDirectionalControls } from '../display-text.js';
import { formatTime } from '../format.js';
import { type Html, html } from '../html.js';
import { contentLang } from './content-language.js';
import { crumbs, layout } from './layout.js';

/** A chunk as the text viewers show it: its index, and its text past what the chunks before already showed. */
export interface ViewChunk {
  index: number;
  text: string;
}

/** A table of a sheet or CSV file, as its rows were read: column names and each row's cells (row numbers as the sheet has them). */
export interface ViewSheet {
  name: string | null;
  columns: string[];
  rows: { row: number; cells: string[] }[];
  /** Rows of the sheet left out (past what the viewer shows at once). */
  omitted: number;
}

/** What the viewer shows of a document, by its type (server/web/library-view.ts reads it). */
export type ViewBody =
  | { kind: 'image' }
  /** An HTML page or Markdown, rendered and made safe (web/sanitize.ts) by the route that read it. */
  | { kind: 'rendered'; html: Html }
  | {
      kind: 'email';
      headers: { from: string; to: string; cc: string; subject: string };
      /** When it was sent (ms), or null when the Date header said nothing readable; `dateText` is what it said. */
      date: number | null;
      dateText: string;
      /** The HTML body, made safe, when the message has one; else its text. */
      html: Html | null;
      text: string;
      attachments: { id: string; filename: string }[];
    }
  | { kind: 'sheet'; sheets: ViewSheet[] }
  | {
      kind: 'text' | 'slides';
      unit: CitationUnit | null;
      pages: { page: number | null; chunks: ViewChunk[] }[];
      /** Where the document page's text goes on past what is shown (a very long document), or null. */
      next: string | null;
    };

/**
 * The passage a search result opened the viewer at ("Open at this passage"): its chunk's text and the answer in it.
 * The viewer marks it where it shows it: a text viewer's chunk, a table's row (`rows`), or, in a document drawn from
 * its own markup, wherever app.js finds its words.
 */
export interface OpenedPassage {
  index: number;
  text: string;
  /** The answer sentence the result showed, or null. */
  answer: string | null;
  /** A sheet's passage: its sheet and the row whose text holds the answer (else the first of its rows), and all its rows. */
  sheet?: string | null;
  row?: number;
  rows?: [number, number];
}

export interface ViewPageData {
  user: { email: string };
  csrfToken: string;
  /** `language`: what its text is in (set or detected; "und" or null when not known). */
  document: { id: string; filename: string; contentType: string; language: string | null };
  project: { id: string; name: string };
  body: ViewBody;
  passage: OpenedPassage | null;
}

/** What app.js looks for in a drawn document: the passage's words, and the answer's, to mark and scroll to. */
const seek = (p: OpenedPassage | null) => (p ? html` data-passage="${p.text}"${p.answer ? html` data-answer="${p.answer}"` : null}` : null);

/**
 * The passage quoted above a document drawn from its own markup: where the page opens without script, and what stays
 * when app.js cannot find its words in the drawing (then it marks the answer here).
 */
function passageQuote(p: OpenedPassage | null, lang: Html | null): Html | null {
  if (!p) return null;
  return html`<aside class="passage-quote" id="passage" aria-label="The passage you opened"${seek(p)}>
  <p class="muted">The passage you opened:</p>
  <p class="chunk-text" dir="auto"${lang}>${withoutDirectionalControls(p.text)}</p>
</aside>`;
}

function emailBody(b: Extract<ViewBody, { kind: 'email' }>, p: OpenedPassage | null, lang: Html | null): Html {
  const h = b.headers;
  const row = (label: string, value: string) => (value ? html`<dt>${label}</dt><dd>${withoutDirectionalControls(value)}</dd>` : null);
  const date =
    b.date !== null
      ? html`<dt>Date</dt><dd><time datetime="${new Date(b.date).toISOString()}" title="${b.dateText}">${formatTime(b.date)}</time></dd>`
      : row('Date', b.dateText);
  return html`<dl class="facts email-headers">${row('From', h.from)}${row('To', h.to)}${row('Cc', h.cc)}${date}${row('Subject', h.subject)}</dl>
  ${b.attachments.length ? html`<p class="attachments">Attachments: ${b.attachments.map((a, i) => html`${i ? ', ' : ''}<a href="/documents/${a.id}">${a.filename}</a>`)}</p>` : null}
  ${passageQuote(p, lang)}
  ${b.html !== null ? html`<article class="rendered document"${lang}>${b.html}</article>` : html`<pre class="plain document"${lang}>${b.text}</pre>`}`;
}

/** A chunk's text in a text viewer, marked as the passage when it is the one opened. */
function chunkText(c: ViewChunk, p: OpenedPassage | null): Html {
  return p && c.index === p.index
    ? html`<span class="at-passage" id="passage" data-chunk="${c.index}"${p.answer ? html` data-answer="${p.answer}"` : null}>${withoutDirectionalControls(c.text)}</span>`
    : html`<span data-chunk="${c.index}">${withoutDirectionalControls(c.text)}</span>`;
}

/**
 * A sheet as a table: sortable by any column (app.js; the buttons in its header), the opened row marked and scrolled
 * to, the other rows of its passage tinted. Wide sheets scroll inside their card.
 */
function sheetTable(sheet: ViewSheet, i: number, p: OpenedPassage | null, lang: Html | null): Html {
  const here = p && p.sheet !== undefined && (p.sheet ?? null) === sheet.name ? p : null;
  const id = `sheet-${i + 1}`;
  return html`<section class="sheet" aria-labelledby="${id}">
  <h2 id="${id}">${sheet.name ?? 'Rows'}</h2>
  <div class="table-wrap" data-may-scroll tabindex="0" role="region" aria-labelledby="${id}">
  <table class="sheet-table" data-sortable${lang}>
    <thead><tr><th scope="col" class="num" lang="en">Row</th>${sheet.columns.map((c, k) => html`<th scope="col"><button type="button" class="sort" data-column="${k + 1}" data-js disabled>${c || `Column ${k + 1}`}</button></th>`)}</tr></thead>
    <tbody>${sheet.rows.map((r) => {
      const opened = here && r.row === here.row;
      const inPassage = here?.rows && r.row >= here.rows[0] && r.row <= here.rows[1];
      return html`<tr${opened ? html` id="passage" class="match" aria-current="true"` : inPassage ? html` class="in-passage"` : null}><th scope="row" class="num">${r.row}</th>${sheet.columns.map(
        (_, k) => html`<td>${r.cells[k] ?? ''}</td>`,
      )}</tr>`;
    })}</tbody>
  </table>
  </div>
  ${sheet.omitted > 0 ? html`<p class="muted">${sheet.omitted.toLocaleString('en')} more rows are not shown here: the document page has all its text.</p>` : null}
</section>`;
}

function body(b: ViewBody, doc: ViewPageData['document'], p: OpenedPassage | null): Html {
  const lang = contentLang(doc.language);
  switch (b.kind) {
    case 'image':
      return html`<p><img src="/documents/${doc.id}/file" alt="${doc.filename}" class="full-size"></p>`;
    case 'rendered':
      return html`${passageQuote(p, lang)}<article class="rendered document"${lang}>${b.html}</article>`;
    case 'email':
      return emailBody(b, p, lang);
    case 'sheet':
      return html`${b.sheets.map((sheet, i) => sheetTable(sheet, i, p, lang))}`;
    case 'slides':
      return html`<ol class="slides">${b.pages.map(
        (s) => html`<li class="slide"${s.page !== null ? html` id="slide-${s.page}"` : null}${p && s.chunks.some((c) => c.index === p.index) ? html` data-opened` : null}>
  <p class="slide-number">${s.page !== null ? unitHeading('slide', s.page) : 'Notes'}</p>
  <div class="slide-body" dir="auto"${lang}>${s.chunks.map((c) => chunkText(c, p))}</div>
</li>`,
      )}</ol>${b.next ? html`<p><a href="/documents/${doc.id}?text=${b.next}#text-heading" class="more">The rest of the slides…</a></p>` : null}`;
    case 'text':
      return b.pages.length === 0
        ? html`<p class="muted">No text to show: the document is not indexed yet, or none was found in it.</p>`
        : html`${b.pages.map(
            (pg) => html`<section class="text-page"${pg.page !== null ? html` id="page-${pg.page}"` : null}>${pg.page !== null ? html`<h2>${unitHeading(b.unit ?? 'page', pg.page)}</h2>` : null}<pre class="plain" dir="auto"${lang}>${pg.chunks.map((c) => chunkText(c, p))}</pre></section>`,
          )}
          ${b.next ? html`<p><a href="/documents/${doc.id}?text=${b.next}#text-heading" class="more">The rest of the text…</a></p>` : null}`;
  }
}

/**
 * A document shown in the browser, whatever its type: an image at full size; an HTML page, Markdown or an e-mail
 * rendered and sanitized (sanitize.ts); sheets and CSV files as tables; slides as slides; other text as it reads.
 * Opened from a search result it is scrolled to the passage, its answer marked. Downloading is on the document page.
 */
export function viewPage(d: ViewPageData) {
  const doc = d.document;
  return layout(
    { title: doc.filename, user: d.user, csrfToken: d.csrfToken, active: 'document', wide: d.body.kind === 'sheet' },
    html`<section class="card viewer">
  ${crumbs([{ href: '/documents', label: 'Documents' }, { href: `/projects/${d.project.id}`, label: d.project.name }])}
  <div class="page-head"><h1 class="filename">${doc.filename}</h1><div class="actions"><a href="/documents/${doc.id}" class="button">Details and download</a></div></div>
  ${body(d.body, doc, d.passage)}
</section>`,
  );
}
