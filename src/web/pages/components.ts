import { type Html, html } from '../html.js';
import { copyRow } from './copy-row.js';
import { crumbs, layout } from './layout.js';
import { forRow } from './row-action.js';

/**
 * Every component of the design system (docs/design.md) on one page, with the markup the pages use: what a new page
 * is built from. `scripts/design-gallery.ts` writes it to docs/design/components.html, and the every-page browser test
 * (test/web/every-page.browser.test.ts) holds it to the same rules as the real pages.
 */
export function componentsPage(): Html {
  const section = (id: string, title: string, body: Html) => html`<section class="card" aria-labelledby="${id}">
  <h2 id="${id}">${title}</h2>
  ${body}
</section>`;
  const rows = [
    { name: 'Field survey of the northern alpine meadows, 2026.pdf', project: 'Finance and accounting 2026', size: '1.2 MiB', at: '2026-11-22 12:30 UTC' },
    { name: 'marmots.txt', project: 'Field notes', size: '51 B', at: '2026-11-21 08:05 UTC' },
  ];
  return layout(
    { title: 'Components', user: { email: 'ada@example.com', isAdmin: true }, csrfToken: 'csrf', active: 'documents', wide: true },
    html`<div class="gallery">
${section(
  'c-page',
  'Page head, breadcrumbs, one primary action',
  html`${crumbs([{ href: '#', label: 'Projects' }, { href: '#', label: 'Field notes' }])}
  <div class="page-head"><h1>Field notes</h1><div class="actions"><a class="button" href="#">Search this project</a><a class="button primary" href="#">Upload</a></div></div>
  <p class="lede muted">One primary action per view (<code>.primary</code>); every other button is the secondary default; <code>.danger</code> for what destroys.</p>
  <nav class="tabs" aria-label="Project"><a href="#" class="tab current" aria-current="page">Documents <span class="count">2</span></a><a href="#" class="tab">Sharing</a><a href="#" class="tab">Sources</a><a href="#" class="tab">Settings</a></nav>`,
)}
${section(
  'c-buttons',
  'Buttons',
  html`<div class="actions">
    <button type="button">Secondary (the default)</button>
    <button type="button" class="danger">Delete…</button>
    <button type="button" class="small">Small</button>
    <button type="button" class="danger small">Remove</button>
    <button type="button" class="link">Link-style button</button>
    <button type="button" disabled>Disabled</button>
    <a class="button" href="#">A link as a button</a>
  </div>`,
)}
${section(
  'c-forms',
  'Forms',
  html`<form class="stack" action="#" method="get">
    <label>Name <input type="text" name="name" aria-describedby="name-hint"><span class="hint" id="name-hint">Shown in search results. Up to 100 characters.</span></label>
    <label>URL <input type="url" name="url" aria-invalid="true" aria-describedby="url-error"><span class="field-error" id="url-error">Give a URL starting with https://.</span></label>
    <label>Every <select name="every"><option>15 minutes</option><option selected>hour</option><option>day</option></select></label>
    <fieldset><legend>Passkeys sign me in</legend>
      <label class="check"><input type="radio" name="mode" checked> On their own, without my password</label>
      <label class="check"><input type="radio" name="mode"> After my password, as a second factor</label>
    </fieldset>
    <label class="check"><input type="checkbox" name="keep"> Keep its documents</label>
  </form>
  <h3>A field and its button</h3>
  <form class="inline-field" action="#" method="get"><label class="visually-hidden" for="c-rename">New name for marmots.txt</label><input id="c-rename" type="text" value="marmots.txt"><button type="submit">Rename</button></form>
  <h3>A row of fields</h3>
  <form class="row-form" action="#" method="get"><label class="grow">Name contains <input type="text" name="q"></label><label>Type <select name="t"><option>Any type</option></select></label><button type="submit">Show</button></form>
  <h3>A secret shown once</h3>
  ${copyRow('c-key', 'ds_live_4f9a…c2e1', 'New API key')}`,
)}
${section(
  'c-messages',
  'Messages',
  html`<div class="notice flash" role="status">Deleted 2 documents: the Trash keeps them for 30 days. <form method="post" action="#" class="inline"><button type="submit" class="link">Undo</button></form></div>
  <p class="error flash" role="alert">That code is not right: type the code your app shows now.</p>
  <p class="notice warning">Still indexing 3 documents: results may be incomplete.</p>
  <p class="empty">No documents yet. Upload some to search them.</p>
  <p><span class="badge">default</span> <span class="badge ok">ready</span> <span class="badge warn">weak match</span> <span class="badge bad">failed</span> <span class="badge accent">shared</span>
    <span class="status status-ready">ready</span> <span class="status status-failed">failed</span></p>`,
)}
${section(
  'c-table',
  'A table',
  html`<p class="muted">Words never break; times stay on one line; the table scrolls inside its card when it must; on a phone each row is a card. Row actions name their row for screen readers.</p>
  <div class="table-wrap"><table class="rows">
    <thead><tr><th scope="col" class="pick"><span class="visually-hidden">Select</span></th><th scope="col">Name</th><th scope="col">Project</th><th scope="col" class="num">Size</th><th scope="col">Uploaded</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${rows.map(
      (r) => html`<tr>
      <td class="pick"><label class="pick"><input type="checkbox" aria-label="Select ${r.name}"></label></td>
      <td><a href="#" class="filename">${r.name}</a></td>
      <td data-label="Project"><a href="#" class="project-name">${r.project}</a></td>
      <td class="num" data-label="Size">${r.size}</td>
      <td data-label="Uploaded"><time>${r.at}</time></td>
      <td class="actions-cell"><div class="row-actions"><button type="button" class="small">${forRow('Restore', r.name)}</button><button type="button" class="small danger">${forRow('Delete for good…', r.name)}</button></div></td>
    </tr>`,
    )}</tbody>
  </table></div>
  <nav class="pager" aria-label="Pages"><a href="#">← First page</a><a href="#" class="next">Next page →</a></nav>`,
)}
${section(
  'c-result',
  'A search result and a passage opened at',
  html`<ol class="results"><li class="result">
    <h2><a href="#" class="filename">handbook.pdf</a> <span class="badge weak-label">weak match</span></h2>
    <p class="meta"><a href="#">Field notes</a> · p. 3</p>
    <p class="snippet">… the annual report describes the institute. <span class="passage">Borrowed <mark>books</mark> must be returned within nineteen days.</span> Fines are …</p>
    <p class="links"><a href="#" class="at-match">Open at this passage</a></p>
  </li></ol>
  <ol class="chunks"><li class="chunk match"><p class="chunk-meta muted">Chunk 4 · Library loans</p><p class="chunk-text">The annual report of the marine institute describes the library. <mark class="answer">Borrowed books must be returned within nineteen days.</mark></p></li></ol>
  <dl class="facts"><dt>Type</dt><dd>PDF</dd><dt>Size</dt><dd>1.2 MiB</dd><dt>Uploaded</dt><dd><time>2026-11-22 12:30 UTC</time></dd></dl>
  <details class="fold"><summary>Show the text search sees</summary><p>Folded content.</p></details>`,
)}
</div>`,
  );
}
