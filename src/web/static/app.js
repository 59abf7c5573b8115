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
