// What every page's forms get from script (each works without it). Served as a file so the CSP can forbid inline script.

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

// "/" focuses search from anywhere (the page's own search box, else the header's), unless the user is typing.
document.addEventListener('keydown', (event) => {
  if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
  const target = event.target instanceof Element ? event.target : null;
  if (target && target.closest('input, textarea, select, [contenteditable]')) return;
  const box = document.querySelector('main input[type=search]') || document.getElementById('site-search');
  if (!box) return;
  event.preventDefault();
  box.focus();
  box.select();
});

// "Select all on this page" above a list of checkboxes named ids (the Documents page).
const all = document.getElementById('select-all');
if (all && all.form) {
  const boxes = () => [...all.form.querySelectorAll('input[type=checkbox][name=ids]')];
  all.closest('label').hidden = false;
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

// A search result opens the document at its passage (#chunk-K): the folded text opens, the passage is marked and
// scrolled into view. A passage past the text shown loads the window of text that starts with it.
function showMatch() {
  const m = /^#chunk-(\d{1,9})$/.exec(location.hash);
  if (!m) return;
  const chunk = document.getElementById(`chunk-${m[1]}`);
  if (chunk) {
    const text = chunk.closest('details');
    if (text) text.open = true;
    for (const other of document.querySelectorAll('.chunk.match')) other.classList.remove('match');
    chunk.classList.add('match');
    chunk.scrollIntoView({ block: 'center' });
    return;
  }
  const url = new URL(location.href);
  if (!document.getElementById('text') || url.searchParams.has('text')) return;
  // The text's cursor (GET /api/v1/documents/{id}/text): base64url of "chunk:K".
  url.searchParams.set('text', btoa(`chunk:${m[1]}`).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''));
  location.replace(url.toString());
}
showMatch();
window.addEventListener('hashchange', showMatch);

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
