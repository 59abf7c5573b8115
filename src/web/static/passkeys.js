// Passkey forms (data-passkey="sign-in" | "register"): shown only where the browser has WebAuthn. On submit: ask the
// form's data-options URL for a challenge, let the browser sign it (@simplewebauthn/browser, served as
// /static/simplewebauthn.js), post the answer as JSON to the form's action, and go where the server says. A sign-in
// form with data-autofill also offers the account's passkeys in the e-mail field's suggestions (conditional mediation,
// autocomplete="username webauthn"), without a click on its button. A change that needs a fresh proof (sudo mode) is
// answered with where to confirm, and the page goes there.
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
    if (!res.ok) {
      const err = new Error(json.error?.message ?? `the server answered ${res.status}`);
      err.confirm = json.error?.details?.confirm;
      throw err;
    }
    return json;
  }

  /** Runs the form's ceremony (`autofill`: through the e-mail field's suggestions) and follows the server's answer. */
  async function ceremony(form, autofill) {
    const webauthn = await lib;
    const csrf = form.querySelector('input[name=_csrf]').value;
    const optionsJSON = await post(form.dataset.options, csrf, {});
    const response =
      form.dataset.passkey === 'register'
        ? await webauthn.startRegistration({ optionsJSON })
        : await webauthn.startAuthentication({ optionsJSON, ...(autofill ? { useBrowserAutofill: true } : {}) });
    const name = form.querySelector('input[name=name]');
    const alone = form.querySelector('input[name=alone]');
    const done = await post(form.action, csrf, {
      response,
      return_to: form.querySelector('input[name=return_to]')?.value || undefined,
      ...(name ? { name: name.value } : {}),
      ...(alone ? { alone: alone.checked } : {}),
    });
    go(done.redirect);
  }

  /** Opens `to`; the same page with another #fragment is loaded again (assigning it would only scroll). */
  function go(to) {
    const next = new URL(to, location.href);
    if (next.pathname + next.search !== location.pathname + location.search) return location.assign(next.href);
    history.replaceState(null, '', next.href);
    location.reload();
  }

  for (const form of forms) {
    form.hidden = false;
    const around = form.closest('.passkey-choice');
    if (around) around.hidden = false;
    const alert = form.querySelector('[role=alert]');
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const button = form.querySelector('button[type=submit]');
      button.disabled = true;
      alert.hidden = true;
      try {
        await ceremony(form, false);
      } catch (err) {
        if (err.confirm) return window.location.assign(err.confirm);
        alert.textContent = err.name === 'NotAllowedError' ? 'The passkey request was cancelled or timed out.' : err.message;
        alert.hidden = false;
        button.disabled = false;
      }
    });
  }

  // Passkeys in the e-mail field's suggestions: waits in the background; a click on the button starts another
  // ceremony, which ends this one (the library aborts it).
  const autofill = forms.find((f) => f.hasAttribute('data-autofill'));
  if (autofill && PublicKeyCredential.isConditionalMediationAvailable) {
    void PublicKeyCredential.isConditionalMediationAvailable().then((ok) => {
      if (ok) ceremony(autofill, true).catch(() => {});
    });
  }
})();
