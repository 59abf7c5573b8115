// The project page, enhanced: uploads from the pickers or by drag-and-drop (files and folders), one request per
// file so each shows its own progress and the server's own error; a folder's files carry their path inside it
// (multipart `paths`), and hidden files (.git, .DS_Store) are left out. Live document status while anything is in
// work. Without this script the same form posts the files and the page shows the status on reload.
(() => {
  const form = document.getElementById('upload');
  const table = document.getElementById('documents');
  if (!form || !table) return;
  const csrf = form.querySelector('input[name=_csrf]').value;
  const inputs = [...form.querySelectorAll('input[type=file]')];
  const list = document.getElementById('upload-list');
  const zone = document.getElementById('dropzone');
  let uploading = 0;
  let polling = false;

  function entry(file, path) {
    const li = document.createElement('li');
    const name = document.createElement('span');
    name.className = 'name';
    name.textContent = path || file.name;
    const bar = document.createElement('progress');
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute('aria-label', `Uploading ${path || file.name}`);
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
    if (kind === 'error') {
      // A refused file was not uploaded: no full bar beside the reason, but a failed state in words.
      const state = document.createElement('span');
      state.className = 'state';
      state.textContent = 'Not uploaded';
      e.bar.replaceWith(state);
    }
  }

  function send(file, path) {
    const e = entry(file, path);
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
      if (path) data.append('paths', JSON.stringify([path]));
      data.append('file', file);
      xhr.send(data);
    }).finally(() => uploading--);
  }

  // items: [{ file, path }], path null for a file chosen or dropped on its own.
  async function uploadAll(items) {
    const hidden = (p) => p.split('/').some((seg) => seg.startsWith('.'));
    const wanted = items.filter((it) => !hidden(it.path || it.file.name));
    if (wanted.length < items.length) {
      const li = document.createElement('li');
      li.className = 'skipped';
      li.textContent = `Left out ${items.length - wanted.length} hidden file${items.length - wanted.length === 1 ? '' : 's'} (names starting with “.”)`;
      list.append(li);
    }
    for (const it of wanted) await send(it.file, it.path); // one at a time: each gets the whole connection, in the order chosen
  }

  const chosen = (input) => [...input.files].map((file) => ({ file, path: file.webkitRelativePath || null }));

  // A dropped folder, read through the File and Directory Entries API; readEntries answers in batches until empty.
  function walk(entry) {
    const path = entry.fullPath.replace(/^\//, '');
    if (entry.isFile) {
      return new Promise((resolve) => entry.file((file) => resolve([{ file, path: path.includes('/') ? path : null }]), () => resolve([])));
    }
    if (!entry.isDirectory) return Promise.resolve([]);
    const reader = entry.createReader();
    const found = [];
    return new Promise((resolve) => {
      const more = () =>
        reader.readEntries(
          (batch) => {
            if (batch.length > 0) {
              found.push(...batch);
              more();
            } else {
              Promise.all(found.map(walk)).then((lists) => resolve(lists.flat()));
            }
          },
          () => resolve([]),
        );
      more();
    });
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
    const summaryLine = document.getElementById('project-summary');
    if (summaryLine) summaryLine.textContent = summary;
    const tbody = table.tBodies[0];
    for (const d of documents) {
      const fresh = rowFrom(d.row);
      const tr = tbody.querySelector(`tr[data-document-id="${CSS.escape(d.id)}"]`);
      if (!tr) {
        tbody.append(fresh);
        table.hidden = false;
        document.getElementById('no-documents')?.remove();
        // "Upload your first documents" no longer, once there are some.
        const heading = document.getElementById('upload-heading');
        if (heading?.dataset.afterFirst) heading.textContent = heading.dataset.afterFirst;
      } else if (tr.dataset.status !== d.status || tr.dataset.progress !== String(d.progress)) {
        // Only the changing cells' contents, so focus on the row's delete button survives an update and the status
        // cell stays the live region that announces it. The actions too when Retry comes or goes with a failure.
        const cells = ['status-cell', 'chunks', ...(d.status === 'failed' || tr.dataset.status === 'failed' ? ['actions-cell'] : [])];
        for (const cls of cells) tr.querySelector(`.${cls}`).replaceChildren(...fresh.querySelector(`.${cls}`).childNodes);
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

  // One model: choosing (or dropping) starts the upload, so there is no button to press; the bare form keeps it.
  const submit = document.getElementById('upload-submit');
  if (submit) submit.hidden = true;
  const how = document.getElementById('upload-how');
  if (how) how.textContent = 'Uploading starts as soon as you choose files or a folder, or drop them here.';
  for (const input of inputs) {
    input.addEventListener('change', () => {
      const items = chosen(input);
      input.value = '';
      void uploadAll(items);
    });
  }
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const items = inputs.flatMap(chosen);
    for (const input of inputs) input.value = '';
    void uploadAll(items);
  });
  zone.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    zone.classList.add('dragover');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('dragover'));
  zone.addEventListener('drop', (ev) => {
    ev.preventDefault();
    zone.classList.remove('dragover');
    // Entries must be taken during the event: the drop's data is gone once it returns.
    const entries = [...ev.dataTransfer.items].map((item) => (item.webkitGetAsEntry ? item.webkitGetAsEntry() : null));
    if (entries.some((e) => e && e.isDirectory)) {
      void Promise.all(entries.filter((e) => e).map(walk)).then((lists) => uploadAll(lists.flat()));
    } else {
      void uploadAll([...ev.dataTransfer.files].map((file) => ({ file, path: null })));
    }
  });
  if (table.querySelector('tr[data-status=queued], tr[data-status=processing]')) poll();
})();
