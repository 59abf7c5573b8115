// Copy buttons: <button class="copy" data-copy-target="input-id">. Served as a file so the CSP can forbid inline script.
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
