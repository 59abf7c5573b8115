// The project page, enhanced: uploads from the picker or by drag-and-drop, one request per file so each
// shows its own progress and the server's own error; and live document status while anything is in work.
// Without this script the same form posts the files and the page shows the status on reload.
(() => {
  const form = document.getElementById('upload');
  const table = document.getElementById('documents');
  if (!form || !table) return;
  const csrf = form.querySelector('input[name=_csrf]').value;
  const input = form.querySelector('input[type=file]');
  const list = document.getElementById('upload-list');
  const zone = document.getElementById('dropzone');
  let uploading = 0;
  let polling = false;

  function entry(file) {
    const li = document.createElement('li');
    const name = document.createElement('span');
    name.className = 'name';
    name.textContent = file.name;
    const bar = document.createElement('progress');
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute('aria-label', `Uploading ${file.name}`);
    const msg = document.createElement('span');
    msg.className = 'msg';
    msg.textContent = 'Uploading…';
    li.append(name, bar, msg);
    list.append(li);
    return { li, bar, msg };
  }

  function say(e, text, kind) {
    e.msg.textContent = text;
    e.li.className = kind;
  }

  function send(file) {
    const e = entry(file);
    uploading++;
    return new Promise((resolve) => {
      const xhr = new XMLHttpRequest();
      xhr.open('POST', form.action);
      xhr.setRequestHeader('X-CSRF-Token', csrf);
      xhr.setRequestHeader('Accept', 'application/json');
      xhr.upload.addEventListener('progress', (ev) => {
        if (ev.lengthComputable) e.bar.value = Math.round((ev.loaded / ev.total) * 100);
      });
      xhr.addEventListener('load', () => {
        let body = null;
        try {
          body = JSON.parse(xhr.responseText);
        } catch {
          body = null;
        }
        if (xhr.status < 300 && body) {
          e.bar.value = 100;
          say(e, body.documents[0] && body.documents[0].duplicate ? 'Already in this project' : 'Uploaded', 'ok');
          poll();
        } else {
          say(e, (body && body.error && body.error.message) || `Upload failed (HTTP ${xhr.status})`, 'error');
        }
        resolve();
      });
      xhr.addEventListener('error', () => {
        say(e, 'Upload failed: the server could not be reached', 'error');
        resolve();
      });
      const data = new FormData();
      data.append('file', file);
      xhr.send(data);
    }).finally(() => uploading--);
  }

  async function uploadAll(files) {
    for (const f of files) await send(f); // one at a time: each gets the whole connection, in the order chosen
  }

  function rowFrom(markup) {
    const t = document.createElement('template');
    t.innerHTML = markup.trim();
    return t.content.firstElementChild;
  }

  async function refresh() {
    const res = await fetch(table.dataset.pollUrl, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
    if (!res.ok || res.redirected) return false; // signed out meanwhile: the next navigation shows the login page
    const { summary, documents } = await res.json();
    document.getElementById('project-summary').textContent = summary;
    const tbody = table.tBodies[0];
    for (const d of documents) {
      const fresh = rowFrom(d.row);
      const tr = tbody.querySelector(`tr[data-document-id="${CSS.escape(d.id)}"]`);
      if (!tr) {
        tbody.append(fresh);
        table.hidden = false;
        document.getElementById('no-documents')?.remove();
      } else if (tr.dataset.status !== d.status || tr.dataset.progress !== String(d.progress)) {
        // Only the changing cells, so focus on the row's delete button survives an update.
        for (const cls of ['status-cell', 'chunks']) tr.querySelector(`.${cls}`).replaceWith(fresh.querySelector(`.${cls}`));
        tr.dataset.status = d.status;
        tr.dataset.progress = String(d.progress);
      }
    }
    return documents.some((d) => d.status === 'queued' || d.status === 'processing');
  }

  function poll() {
    if (polling) return;
    polling = true;
    const tick = async () => {
      let busy = true;
      try {
        busy = await refresh();
      } catch {
        busy = true;
      }
      if (busy || uploading > 0) setTimeout(tick, 1000);
      else polling = false;
    };
    void tick();
  }

  input.addEventListener('change', () => {
    const files = [...input.files];
    input.value = '';
    void uploadAll(files);
  });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const files = [...input.files];
    input.value = '';
    void uploadAll(files);
  });
  zone.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    zone.classList.add('dragover');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('dragover'));
  zone.addEventListener('drop', (ev) => {
    ev.preventDefault();
    zone.classList.remove('dragover');
    void uploadAll([...ev.dataTransfer.files]);
  });
  if (table.querySelector('tr[data-status=queued], tr[data-status=processing]')) poll();
})();
