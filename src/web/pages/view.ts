import { type CitationUnit, unitHeading } from '../../core/citation-label.js';
import { withoutDirectionalControls } from '../display-text.js';
import { type Html, html } from '../html.js';
import { markdownHtml, safeHtml } from '../sanitize.js';
import { layout } from './layout.js';

/** What the viewer shows of a document, by its type (server/web/library-view.ts reads it). */
export type ViewBody =
  | { kind: 'image' }
  | { kind: 'html'; html: string }
  | { kind: 'markdown'; markdown: string }
  | {
      kind: 'email';
      headers: { from: string; to: string; cc: string; date: string; subject: string };
      /** The HTML body when the message has one, else its text. */
      html: string | null;
      text: string;
      attachments: { id: string; filename: string }[];
    }
  | {
      kind: 'text';
      unit: CitationUnit | null;
      pages: { page: number | null; text: string }[];
      /** Where the document page's text goes on past what is shown (a very long document), or null. */
      next: string | null;
    };

export interface ViewPageData {
  user: { email: string };
  csrfToken: string;
  document: { id: string; filename: string; contentType: string };
  body: ViewBody;
}

function emailBody(b: Extract<ViewBody, { kind: 'email' }>): Html {
  const h = b.headers;
  const row = (label: string, value: string) => (value ? html`<dt>${label}</dt><dd>${withoutDirectionalControls(value)}</dd>` : null);
  return html`<dl class="facts email-headers">${row('From', h.from)}${row('To', h.to)}${row('Cc', h.cc)}${row('Date', h.date)}${row('Subject', h.subject)}</dl>
  ${b.attachments.length ? html`<p class="attachments">Attachments: ${b.attachments.map((a, i) => html`${i ? ', ' : ''}<a href="/documents/${a.id}">${a.filename}</a>`)}</p>` : null}
  ${b.html !== null ? html`<article class="rendered">${safeHtml(b.html)}</article>` : html`<pre class="plain">${b.text}</pre>`}`;
}

function body(b: ViewBody, doc: ViewPageData['document']): Html {
  switch (b.kind) {
    case 'image':
      return html`<p><img src="/documents/${doc.id}/file" alt="${doc.filename}" class="full-size"></p>`;
    case 'html':
      return html`<article class="rendered">${safeHtml(b.html)}</article>`;
    case 'markdown':
      return html`<article class="rendered">${markdownHtml(b.markdown)}</article>`;
    case 'email':
      return emailBody(b);
    case 'text':
      return b.pages.length === 0
        ? html`<p class="muted">No text to show: the document is not indexed yet, or none was found in it.</p>`
        : html`${b.pages.map((p) => html`<section class="text-page"${p.page !== null ? html` id="page-${p.page}"` : null}>${p.page !== null ? html`<h2>${unitHeading(b.unit ?? 'page', p.page)}</h2>` : null}<pre class="plain" dir="auto">${withoutDirectionalControls(p.text)}</pre></section>`)}
          ${b.next ? html`<p><a href="/documents/${doc.id}?text=${b.next}#text-heading" class="more">The rest of the text…</a></p>` : null}`;
  }
}

/**
 * A document shown in the browser, whatever its type: an image at full size, an HTML page, Markdown or an e-mail
 * rendered and sanitized (sanitize.ts), slides and sheets as their text under slide and row markers. A PDF opens in the
 * browser's own viewer (the original), which pages and zooms.
 */
export function viewPage(d: ViewPageData) {
  const doc = d.document;
  return layout(
    { title: doc.filename, user: d.user, csrfToken: d.csrfToken, active: 'document' },
    html`<section class="card viewer">
  <p class="crumbs"><a href="/documents">Documents</a> › <a href="/documents/${doc.id}">${doc.filename}</a> ›</p>
  <h1 class="filename">${doc.filename}</h1>
  <div class="actions"><a href="/documents/${doc.id}/file" download="${doc.filename}" class="button secondary">Download the original</a></div>
  ${body(d.body, doc)}
</section>`,
  );
}
