// What pages get from script (each works without it). A file, so the CSP can forbid inline script.

for (const c of document.querySelectorAll('[data-js]')) c.hidden = c.disabled = false;

// Copy buttons: <button class="copy" data-copy-target="input-id">.
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('button.copy') : null;
  if (!button) return;
  const input = document.getElementById(button.getAttribute('data-copy-target') || '');
  if (!input) return;
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
  } catch {
    document.execCommand('copy');
  }
  button.textContent = 'Copied';
  setTimeout(() => { button.textContent = 'Copy'; }, 2000);
});

// Print buttons (recovery codes): the browser's print dialog; the print stylesheet leaves the page's chrome out.
document.addEventListener('click', (event) => {
  if (event.target instanceof Element && event.target.closest('button[data-print]')) window.print();
});

// "/" focuses search from anywhere (the box that says so; none once turned off in Settings), unless the user is typing.
document.addEventListener('keydown', (event) => {
  if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
  const target = event.target instanceof Element ? event.target : null;
  if (target && target.closest('input, textarea, select, [contenteditable]')) return;
  const box = document.querySelector('[aria-keyshortcuts="/"]');
  if (!box) return;
  event.preventDefault();
  box.focus();
  box.select();
});

// "Select all on this page" above a list of checkboxes named ids (the Documents page).
const all = document.getElementById('select-all');
if (all && all.form) {
  const boxes = () => [...all.form.querySelectorAll('input[type=checkbox][name=ids]')];
  all.closest('label').hidden = !boxes().length;
  all.addEventListener('change', () => boxes().forEach((b) => { b.checked = all.checked; }));
  all.form.addEventListener('change', (event) => {
    if (event.target === all) return;
    const picked = boxes().filter((b) => b.checked).length;
    all.checked = picked > 0 && picked === boxes().length;
    all.indeterminate = picked > 0 && picked < boxes().length;
  });
}

// On a phone the Documents page's filters and bulk actions would fill the first screen: they start folded there
// (open without script, and on wider screens).
if (matchMedia('(max-width: 640px)').matches) for (const fold of document.querySelectorAll('details[data-fold-narrow]')) fold.open = false;

// The Documents page's bulk actions unfold once a document is picked, and fold when none is (open without script).
const bulk = document.getElementById('bulk');
const bulkFold = bulk && bulk.querySelector('details.fold');
if (bulkFold) {
  const picked = () => bulk.querySelectorAll('input[type=checkbox][name=ids]:checked').length;
  bulkFold.open = picked() > 0;
  bulk.addEventListener('change', () => { bulkFold.open = picked() > 0; });
}

// The document page's preview: Prev and Next swap the page image in place (without script they load the page).
const preview = document.getElementById('preview');
if (preview) {
  const img = preview.querySelector('img');
  const where = document.getElementById('preview-where');
  const prev = preview.querySelector('a[rel=prev]');
  const next = preview.querySelector('a[rel=next]');
  const larger = preview.querySelector('a.enlarge');
  const pages = Number(preview.dataset.pages);
  const id = preview.dataset.documentId;
  let page = Number(preview.dataset.page);
  const show = (n) => {
    page = n;
    img.src = `/documents/${id}/thumbnail.webp${n === 1 ? '' : `?page=${n}`}`;
    img.alt = `Page ${n} of ${preview.dataset.filename}`;
    where.textContent = `Page ${n} of ${pages}`;
    if (larger.pathname.endsWith('/file')) larger.setAttribute('href', `${larger.pathname}#page=${n}`); // a PDF opens larger at the page shown
    prev.hidden = n <= 1;
    next.hidden = n >= pages;
    prev.href = `/documents/${id}?page=${Math.max(1, n - 1)}#preview`;
    next.href = `/documents/${id}?page=${Math.min(pages, n + 1)}#preview`;
    history.replaceState(null, '', `/documents/${id}?page=${n}#preview`);
  };
  preview.addEventListener('click', (event) => {
    const link = event.target instanceof Element ? event.target.closest('a[rel=prev], a[rel=next]') : null;
    if (!link) return;
    event.preventDefault();
    show(link === next ? Math.min(pages, page + 1) : Math.max(1, page - 1));
    // Keep focus on a visible control at either end.
    if (link.hidden) (link === next ? prev : next).focus();
  });
}

// "Open at this passage": find the passage's words in what the page draws, mark its answer sentence (<mark
// class="answer">) and its block (.at-passage), and scroll it to the middle of the window. Words are compared as
// letters and digits only, lowercased, so markup, spacing and punctuation between them do not matter.
const WORD_CHAR = /[\p{L}\p{N}]/u;
const lower = (c) => { const l = c.toLowerCase(); return l.length === 1 ? l : c; };
function normalized(text) {
  let out = '';
  for (let i = 0; i < text.length; i++) if (WORD_CHAR.test(text[i])) out += lower(text[i]);
  return out;
}
/** The letters of `root`'s text, each with the text node and offset it came from. */
function letters(root) {
  let text = '';
  const at = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const data = node.data;
    for (let i = 0; i < data.length; i++) {
      if (!WORD_CHAR.test(data[i])) continue;
      text += lower(data[i]);
      at.push([node, i]);
    }
  }
  return { text, at };
}
/** Wraps letters [start, end) of `found` in <mark class="answer">, one per text node; returns the first mark. */
function markLetters(found, start, end) {
  const spans = new Map();
  for (let k = start; k < end; k++) {
    const [node, i] = found.at[k];
    const span = spans.get(node);
    if (span) span[1] = i + 1;
    else spans.set(node, [i, i + 1]);
  }
  // The sentence's closing punctuation belongs to it (the last letter's node, up to the next space).
  const last = [...spans].at(-1);
  if (last) while (last[1][1] < last[0].data.length && /[^\s\p{L}\p{N}]/u.test(last[0].data[last[1][1]])) last[1][1]++;
  let first = null;
  for (const [node, [from, to]] of spans) {
    const middle = node.splitText(from);
    middle.splitText(to - from);
    const mark = document.createElement('mark');
    mark.className = 'answer';
    middle.parentNode.insertBefore(mark, middle);
    mark.appendChild(middle);
    first = first || mark;
  }
  return first;
}
const BLOCK = 'p, li, tr, td, blockquote, pre, h1, h2, h3, h4, h5, h6, dd, .slide, .chunk, section, article';
/**
 * Finds the passage (its first words) and its answer in `root`; marks the answer, else the passage's block. Returns
 * what to scroll to, or null when neither is there.
 */
function markPassage(root, passage, answer) {
  const found = letters(root);
  const head = passage ? normalized(passage).slice(0, 48) : '';
  const from = head ? found.text.indexOf(head) : 0;
  if (answer) {
    const words = normalized(answer);
    let start = found.text.indexOf(words, Math.max(0, from));
    if (start < 0 && from > 0) start = found.text.indexOf(words);
    if (start >= 0 && words) {
      const mark = markLetters(found, start, start + words.length);
      mark.parentElement.closest(BLOCK)?.classList.add('at-passage');
      return mark;
    }
  }
  if (head && from >= 0) {
    const block = found.at[from][0].parentElement.closest(BLOCK) || found.at[from][0].parentElement;
    block.classList.add('at-passage');
    return block;
  }
  return null;
}
function scrollToPassage(target) {
  target.scrollIntoView({ block: 'center' });
}
/** The viewer, opened at a passage (#passage): in the drawn document, or in the quote above it when not found there. */
function openViewerPassage() {
  const quote = document.querySelector('.passage-quote[data-passage]');
  const drawn = document.querySelector('.document');
  if (quote && drawn) {
    const target = markPassage(drawn, quote.dataset.passage, quote.dataset.answer);
    if (target) {
      quote.hidden = true;
      return scrollToPassage(target);
    }
    return scrollToPassage(markPassage(quote, null, quote.dataset.answer) || quote);
  }
  const opened = document.getElementById('passage');
  if (!opened) return;
  const answer = opened.dataset.answer;
  const mark = answer ? markPassage(opened, null, answer) || markPassage(opened.closest('.text-page, .slide') || opened.parentElement, null, answer) : null;
  scrollToPassage(mark || opened);
}
openViewerPassage();

// The document page opened at a passage (#chunk-K, from a search result): the folded text opens, the passage is
// marked (its answer too, `data-answer`) and scrolled into view. A passage past the text shown loads the window of
// text that starts with it.
function showMatch() {
  const m = /^#chunk-(\d{1,9})$/.exec(location.hash);
  if (!m) return;
  const chunk = document.getElementById(`chunk-${m[1]}`);
  if (chunk) {
    const text = chunk.closest('details');
    if (text) text.open = true;
    for (const other of document.querySelectorAll('.chunk.match')) other.classList.remove('match');
    chunk.classList.add('match');
    const answer = chunk.dataset.answer && !chunk.querySelector('mark.answer') ? markPassage(chunk.querySelector('.chunk-text') || chunk, null, chunk.dataset.answer) : null;
    scrollToPassage(answer || chunk.querySelector('mark.answer') || chunk);
    return;
  }
  const url = new URL(location.href);
  if (!document.getElementById('text') || url.searchParams.has('text')) return;
  // The text from chunk K on: the page makes the text's cursor for it.
  url.searchParams.set('text', m[1]);
  location.replace(url.toString());
}
showMatch();
window.addEventListener('hashchange', showMatch);

// Tables that sort (a sheet in the viewer): the column's button sorts by it, again the other way; numbers as numbers.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('table[data-sortable] button.sort') : null;
  if (!button) return;
  const th = button.closest('th');
  const table = th.closest('table');
  const column = Number(button.dataset.column);
  const ascending = th.getAttribute('aria-sort') !== 'ascending';
  for (const other of table.querySelectorAll('th[aria-sort]')) other.removeAttribute('aria-sort');
  th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
  const body = table.tBodies[0];
  const value = (row) => row.cells[column]?.textContent.trim() ?? '';
  const number = (v) => (/^-?[\d,]*\.?\d+$/.test(v) ? Number(v.replace(/,/g, '')) : NaN);
  const rows = [...body.rows].sort((a, b) => {
    const [x, y] = [value(a), value(b)];
    const [nx, ny] = [number(x), number(y)];
    const order = !Number.isNaN(nx) && !Number.isNaN(ny) ? nx - ny : x.localeCompare(y, undefined, { numeric: true, sensitivity: 'base' });
    return ascending ? order : -order;
  });
  body.append(...rows);
});

// Live status, the one way every page follows documents in work (the document page, the Documents list): while any
// `.live-status` shows queued or processing, ask /documents/status.json about those and swap in what the server says.
// Controls follow: `data-shown-when="failed"` (Retry) shows on a failure, `data-enabled-when="settled"` (Move) and
// `data-hidden-when="settled"` once the document is ready or failed.
const SETTLED = ['ready', 'failed'];
function follow(el, status) {
  const scope = el.closest('tr, .card') || document;
  for (const c of scope.querySelectorAll('[data-shown-when]')) c.hidden = c.dataset.shownWhen !== status;
  for (const c of scope.querySelectorAll('[data-enabled-when="settled"]')) c.disabled = !SETTLED.includes(status);
  for (const c of scope.querySelectorAll('[data-hidden-when="settled"]')) c.hidden = SETTLED.includes(status);
}
async function pollStatus() {
  const busy = [...document.querySelectorAll('.live-status[data-document-id]')].filter((el) => !SETTLED.includes(el.dataset.status));
  if (busy.length === 0) return;
  try {
    const ids = [...new Set(busy.map((el) => el.dataset.documentId))].join(',');
    const res = await fetch(`/documents/status.json?ids=${ids}`, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
    if (res.redirected) return; // signed out meanwhile: the next navigation shows the login page
    for (const d of res.ok ? (await res.json()).documents : []) {
      for (const el of busy.filter((b) => b.dataset.documentId === d.id)) {
        if (el.dataset.status === d.status && el.dataset.progress === String(d.progress)) continue;
        el.innerHTML = d.html; // the server's own escaped markup
        el.dataset.status = d.status;
        el.dataset.progress = String(d.progress);
        follow(el, d.status);
      }
    }
  } catch {
    // The server away for a moment: ask again next time.
  }
  setTimeout(pollStatus, 1500);
}
void pollStatus();

// The schedule picker (sources): "Another interval" is typed only when chosen (without script the field stays shown).
for (const select of document.querySelectorAll('select[data-schedule]')) {
  const other = select.form && select.form.querySelector('[data-schedule-other]');
  if (!other) continue;
  const sync = () => { other.hidden = select.value !== 'other'; };
  select.addEventListener('change', () => { sync(); if (!other.hidden) other.querySelector('input').focus(); });
  sync();
}
