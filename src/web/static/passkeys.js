// Passkey forms (data-passkey="sign-in" | "register"): shown only where the browser has WebAuthn. On submit: ask the
// form's data-options URL for a challenge, let the browser sign it (@simplewebauthn/browser, served as
// /static/simplewebauthn.js), post the answer as JSON to the form's action, and go where the server says.
(() => {
  const forms = [...document.querySelectorAll('form[data-passkey]')];
  if (forms.length === 0 || !window.PublicKeyCredential) return;
  const lib = new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = '/static/simplewebauthn.js';
    script.onload = () => resolve(window.SimpleWebAuthnBrowser);
    script.onerror = () => reject(new Error('could not load the passkey script'));
    document.head.append(script);
  });

  async function post(url, csrf, body) {
    const res = await fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': csrf },
      body: JSON.stringify(body),
    });
    const json = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(json.error?.message ?? `the server answered ${res.status}`);
    return json;
  }

  for (const form of forms) {
    form.hidden = false;
    const alert = form.querySelector('[role=alert]');
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const button = form.querySelector('button[type=submit]');
      button.disabled = true;
      alert.hidden = true;
      try {
        const webauthn = await lib;
        const csrf = form.querySelector('input[name=_csrf]').value;
        const optionsJSON = await post(form.dataset.options, csrf, {});
        const response = form.dataset.passkey === 'register' ? await webauthn.startRegistration({ optionsJSON }) : await webauthn.startAuthentication({ optionsJSON });
        const name = form.querySelector('input[name=name]');
        const done = await post(form.action, csrf, { response, return_to: form.querySelector('input[name=return_to]')?.value || undefined, ...(name ? { name: name.value } : {}) });
        window.location.assign(done.redirect);
      } catch (err) {
        alert.textContent = err.name === 'NotAllowedError' ? 'The passkey request was cancelled or timed out.' : err.message;
        alert.hidden = false;
        button.disabled = false;
      }
    });
  }
})();
