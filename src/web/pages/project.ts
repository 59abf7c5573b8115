import { maxlengthFor } from '../../core/code-points.js';
import { MAX_DESCRIPTION_CHARS, MAX_EMAIL_CHARS, MAX_NAME_CHARS } from '../../core/name-limits.js';
import { formatBytes, formatTime, languageName, languageTitle, plural, typeName } from '../format.js';
import { html } from '../html.js';
import { confirmPage } from './confirm.js';
import { crumbs, layout } from './layout.js';
import { projectTabs, type ProjectTab } from './project-tabs.js';
import { indexingNote, type ProjectRow } from './projects.js';
import { forRow } from './row-action.js';

/** The file picker's filter: the extensions of every type the upload reads (the server decides by the bytes). */
const ACCEPT = '.pdf,.docx,.odt,.rtf,.epub,.pptx,.odp,.xlsx,.ods,.csv,.tsv,.txt,.md,.markdown,.html,.htm,.xhtml,.eml,.png,.jpg,.jpeg,.tif,.tiff,.webp,.doc,.xls,.ppt';

export interface DocumentRow {
  id: string;
  projectId: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  status: 'queued' | 'processing' | 'ready' | 'failed';
  progress: number;
  chunkCount: number;
  error: string | null;
  /** The relative path it was uploaded from (a folder upload or `upload --sync`), or null. */
  path: string | null;
  createdAt: number;
}

/** A member as the Share section lists them. */
export interface MemberView {
  id: string;
  kind: 'user' | 'group';
  email?: string;
  group?: string;
  role: 'viewer' | 'editor' | 'owner';
  /** The owner of record: an owner who can't be removed (only transferred from). */
  ofRecord?: boolean;
}

export interface ProjectPageData {
  user: { email: string };
  csrfToken: string;
  project: ProjectRow;
  /** Its members, for an owner (the Share section); null for anyone else. */
  members: MemberView[] | null;
  /** What the share box offers as one types: `group:<name>` and people's e-mails (owners only). */
  suggestions?: readonly string[];
  documents: DocumentRow[];
  /** True when the project has more documents than the page lists. */
  more: boolean;
  /**
   * Its ready documents' languages beside those the embedding model reads (null: unknown or many), and how many of
   * the documents are in languages it does not read (language/model-reach.ts).
   */
  languages?: { documents: { language: string; documents: number }[]; model: { id: string; languages: readonly string[] | null }; unread: string[]; unreadShare: number; mostlyUnread: boolean };
  limits: { maxFileMb: number; maxFiles: number };
  /** The Settings tab's Languages form: the project's settings and what may be chosen. */
  languageSettings?: LanguageSettingsView;
  /** The tab shown (one URL each): documents (the project page), sharing or settings (owners). */
  tab?: Exclude<ProjectTab, 'sources'>;
  error?: string;
  notice?: string;
  /** The Settings tab's name and description as they were sent, refused: shown again to correct, not the saved ones. */
  form?: { name: string; description: string };
  /** The Sharing tab's share or transfer form as it was sent, refused: shown again to correct. */
  sharing?: SharingTyped;
}

export type SharingTyped = { member: string; role: string } | { email: string };

export interface LanguageSettingsView {
  /** The project's document language (ISO 639-1), or null: each passage's is detected. */
  language: string | null;
  /** Languages offered, by name. */
  languages: { code: string; name: string }[];
  /** Its OCR languages ("deu+eng"), or null: the server's. */
  ocrLanguages: string | null;
  /** The server's OCR: its default languages and those installed; null when OCR is off. */
  ocr: { default: string; installed: string[] } | null;
  /** The setting's OCR languages not installed here, each with what to install. */
  missing: { code: string; install: string }[];
}

/** "3 documents · 9 chunks · 13 KiB · still indexing 1 document": on the page, and in the feed project.js polls. */
export const projectSummary = (p: Pick<ProjectRow, 'documentCount' | 'chunkCount' | 'sizeBytes' | 'indexing'>): string =>
  [plural(p.documentCount, 'document'), plural(p.chunkCount, 'chunk'), formatBytes(p.sizeBytes), indexingNote(p.indexing)]
    .filter((part) => part)
    .join(' · ');

/** A document's status cell; project.js renders the same markup when it polls. */
export function statusCell(doc: Pick<DocumentRow, 'status' | 'progress' | 'error'>) {
  const label = html`<span class="status status-${doc.status}">${doc.status}</span>`;
  if (doc.status === 'processing' || doc.status === 'queued') {
    const pct = Math.round(doc.progress * 100);
    return html`${label} <progress max="100" value="${pct}" aria-label="Processing progress">${pct}%</progress>`;
  }
  if (doc.status === 'failed') return html`${label} <span class="error">${doc.error ?? 'failed'}</span>`;
  return label;
}

/** Retry for a failed document: its job runs again, as for a new upload. */
/**
 * A document's status that follows the server while it is queued or processing (app.js polls
 * /documents/status.json and swaps it, the one way every page keeps status live).
 */
export const liveStatus = (doc: Pick<DocumentRow, 'id' | 'status' | 'progress' | 'error'>) =>
  html`<span class="live-status" data-document-id="${doc.id}" data-status="${doc.status}" data-progress="${String(doc.progress)}" aria-live="polite">${statusCell(doc)}</span>`;

export const retryForm = (doc: Pick<DocumentRow, 'id' | 'filename'>, csrfToken: string, returnTo?: string) =>
  html`<form method="post" action="/documents/${doc.id}/retry" class="inline">
    <input type="hidden" name="_csrf" value="${csrfToken}">${returnTo ? html`<input type="hidden" name="return_to" value="${returnTo}">` : null}
    <button type="submit" class="small">${forRow('Retry', doc.filename)}</button>
  </form>`;

/** The upload path under a name, when there is one. */
export const pathLine = (path: string | null) => (path ? html`<br><span class="path muted" title="Uploaded from">${path}</span>` : null);

/**
 * The upload area for a project: two pickers and a drop zone. With project.js, choosing or dropping starts the
 * upload at once (the script hides the button and says so); without it, the button posts what was chosen.
 */
export function uploadForm(projectId: string, limits: { maxFileMb: number; maxFiles: number }, csrfToken: string) {
  return html`<form method="post" action="/projects/${projectId}/upload" enctype="multipart/form-data" id="upload" class="upload" aria-labelledby="upload-heading"
    data-max-files="${limits.maxFiles}" data-max-bytes="${limits.maxFileMb * 1024 * 1024}">
    <input type="hidden" name="_csrf" value="${csrfToken}">
    <div class="dropzone" id="dropzone">
      <div class="pickers">
        <label>Choose files <input type="file" name="file" id="pick-files" multiple accept="${ACCEPT}"></label>
        <label>Choose a folder <input type="file" name="file" id="pick-folder" webkitdirectory multiple></label>
      </div>
      <p class="muted">Or drop files or folders here. PDF, Word, OpenDocument, slides, spreadsheets, EPUB, RTF, Markdown, HTML, e-mail, images or text, up to ${limits.maxFileMb} MiB each, ${limits.maxFiles} at a time.
        A folder’s files keep their paths inside it; a file uploaded again at the same path replaces the older version.</p>
      <p class="upload-how" id="upload-how">Choose files or a folder, then press Upload.</p>
    </div>
    <button type="submit" id="upload-submit" class="primary">Upload</button>
    <ul id="upload-list" class="upload-list" aria-live="polite"></ul>
  </form>`;
}

export function documentRow(doc: DocumentRow, csrfToken: string, role: ProjectRow['role']) {
  const edits = role !== 'viewer';
  return html`<tr data-document-id="${doc.id}" data-status="${doc.status}">
  <td class="name-cell"><a href="/documents/${doc.id}" class="filename">${doc.filename}</a>${pathLine(doc.path)}</td>
  <td data-label="Type">${typeName(doc.contentType)}</td>
  <td class="num" data-label="Size">${formatBytes(doc.sizeBytes)}</td>
  <td class="status-cell" data-label="Status" aria-live="polite">${statusCell(doc)}</td>
  <td class="num chunks" data-label="Chunks">${doc.chunkCount}</td>
  <td data-label="Uploaded">${formatTime(doc.createdAt)}</td>
  <td class="actions-cell">${edits && doc.status === 'failed' ? retryForm(doc, csrfToken, `/projects/${doc.projectId}`) : null}
    ${edits ? html`<a href="/documents/${doc.id}/delete" class="button danger small">${forRow('Delete…', doc.filename)}</a>` : null}</td>
</tr>`;
}

/** A project's documents, live: project.js polls `data-poll-url` and adds or updates rows (hidden while empty). */
export function documentsTable(projectId: string, documents: DocumentRow[], csrfToken: string, role: ProjectRow['role']) {
  return html`<div class="scroll"><table class="documents rows" id="documents" data-poll-url="/projects/${projectId}/documents.json"${documents.length === 0 ? html` hidden` : null}>
    <thead><tr><th scope="col" class="col-name">File</th><th scope="col">Type</th><th scope="col" class="num">Size</th><th scope="col" class="col-status">Status</th><th scope="col" class="num">Chunks</th><th scope="col">Uploaded</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${documents.map((doc) => documentRow(doc, csrfToken, role))}</tbody>
  </table></div>`;
}

/** "Languages: de 12 · en 3 — the search model (builtin:…) reads en", and a note when most documents are in others. */

function languagesNote(l: NonNullable<ProjectPageData['languages']>) {
  const reads = l.model.languages ? `reads ${l.model.languages.map(languageName).join(', ')}` : 'reads many languages';
  return html`<p class="languages muted">Languages: ${l.documents.map((d) => `${languageName(d.language)} ${d.documents}`).join(' · ')} — the search model (${l.model.id}) ${reads}</p>
  ${
    l.mostlyUnread
      ? html`<p class="notice warning languages-note" role="note">${Math.round(l.unreadShare * 100)} % of these documents are in languages the search model does not read (${l.unread.map(languageTitle).join(', ')}): search finds them by their words, not their meaning. A multilingual model served by Ollama (such as bge-m3) reads them — see the models guide (docs/models.md#languages).</p>`
      : null
  }`;
}

export function projectPage(d: ProjectPageData) {
  const p = d.project;
  const tab = d.tab ?? 'documents';
  const title = tab === 'sharing' ? `${p.name}: sharing` : tab === 'settings' ? `${p.name}: settings` : p.name;
  return layout(
    { title, user: d.user, csrfToken: d.csrfToken, active: 'projects', wide: true, ...(tab === 'documents' ? { script: 'project.js' as const } : {}) },
    html`<section class="card">
  ${crumbs([{ href: '/projects', label: 'Projects' }])}
  <h1>${p.name}${p.isDefault ? html` <span class="badge">default</span>` : null}</h1>
  ${p.description ? html`<p>${p.description}</p>` : null}
  <p class="muted"><span id="project-summary">${projectSummary(p)}</span> · <a href="/search?project=${p.id}">Search this project</a></p>
  ${projectTabs(p.id, tab, p.role)}
  ${tab === 'documents' ? html`<p class="role-note">Your role: <strong class="role role-${p.role}">${p.role}</strong>${p.sharedBy ? html` · shared with you by ${p.sharedBy}` : null}</p>` : null}
  ${tab === 'documents' && d.languages && d.languages.documents.length > 0 ? languagesNote(d.languages) : null}
  ${d.error ? html`<p class="error" role="alert">${d.error}</p>` : null}
  ${d.notice ? html`<p class="notice" role="status">${d.notice}</p>` : null}
  ${tab === 'sharing' && d.members ? shareSection(p, d.members, d.csrfToken, d.suggestions ?? [], d.sharing) : tab === 'settings' && p.role === 'owner' ? projectSettings(p, d.csrfToken, d.languageSettings, d.form) : documentsTab(d)}
</section>`,
  );
}

/** The Documents tab: upload (editors and owners) and the project's documents. */
function documentsTab(d: ProjectPageData) {
  const p = d.project;
  return html`${p.role === 'viewer' ? null : html`<h2 id="upload-heading">Upload</h2>
  ${uploadForm(p.id, d.limits, d.csrfToken)}`}

  <h2>Documents</h2>
  ${d.documents.length === 0 ? html`<p class="muted" id="no-documents">No documents yet${p.role === 'viewer' ? '' : ': upload some above'}.</p>` : null}
  ${documentsTable(p.id, d.documents, d.csrfToken, p.role)}
  ${d.more ? html`<p class="muted">Showing the first ${plural(d.documents.length, 'document')}: <a href="/documents?project_id=${p.id}">page through all of them under Documents</a>.</p>` : null}`;
}

const ROLE_HELP = 'Viewers search and read; editors also upload, rename, move, retry and delete documents; owners also share, rename, delete and transfer the project.';

function roleSelect(selected: string, label: string) {
  return html`<select name="role" aria-label="${label}">${(['viewer', 'editor', 'owner'] as const).map(
    (r) => html`<option value="${r}"${r === selected ? html` selected` : null}>${r}</option>`,
  )}</select>`;
}

/** Who the project is shared with, and the forms that change it (owners only). */
function shareSection(p: ProjectRow, members: MemberView[], csrfToken: string, suggestions: readonly string[], typed?: SharingTyped) {
  const share = typed && 'member' in typed ? typed : { member: '', role: 'viewer' };
  const transferTo = typed && 'email' in typed ? typed.email : null;
  const csrf = html`<input type="hidden" name="_csrf" value="${csrfToken}">`;
  const rows = members.map((m) => {
    const name = m.kind === 'user' ? m.email! : `group: ${m.group!}`;
    const ofRecord = m.ofRecord === true;
    return html`<tr data-member-id="${m.id}">
  <td>${name}${ofRecord ? html` <span class="badge">owner of record</span>` : null}</td>
  <td>${
    ofRecord
      ? m.role
      : html`<form method="post" action="/projects/${p.id}/members" class="inline">${csrf}
      <input type="hidden" name="member" value="${m.kind === 'user' ? m.email! : `group:${m.group!}`}">${roleSelect(m.role, `Role of ${name}`)}
      <button type="submit" class="small">${forRow('Change', name)}</button></form>`
  }</td>
  <td>${ofRecord ? null : html`<form method="post" action="/projects/${p.id}/members/${m.id}/remove" class="inline">${csrf}
      <button type="submit" class="danger small">${forRow('Remove', name)}</button></form>`}</td>
</tr>`;
  });
  return html`<h2 id="share">Who it is shared with</h2>
  <p class="muted">Your role: <strong class="role role-${p.role}">${p.role}</strong>. ${ROLE_HELP}</p>
  <div class="scroll"><table class="members rows" aria-label="Members">
    <thead><tr><th scope="col">Member</th><th scope="col">Role</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>
  <form method="post" action="/projects/${p.id}/members" class="stack" id="share-form">${csrf}
    <label>Share with <input type="text" name="member" value="${share.member}" required maxlength="${maxlengthFor(MAX_EMAIL_CHARS)}" list="share-suggestions" autocomplete="off" aria-describedby="share-hint">
      <span class="hint" id="share-hint">A person's e-mail, or group:name for a group (e.g. group:editors).</span></label>
    <datalist id="share-suggestions">${suggestions.map((v) => html`<option value="${v}"></option>`)}</datalist>
    <label>Role ${roleSelect(share.role, 'Role')}</label>
    <button type="submit" class="primary">Share</button>
  </form>
  <details${transferTo === null ? null : html` open`}><summary>Transfer this project</summary>
    <form method="post" action="/projects/${p.id}/transfer" class="stack">${csrf}
      <label>New owner of record (e-mail) <input type="email" name="email" value="${transferTo}" required maxlength="${maxlengthFor(MAX_EMAIL_CHARS)}"></label>
      <p class="muted">You stay an owner until you remove yourself.</p>
      <button type="submit" class="secondary">Transfer</button>
    </form>
  </details>`;
}

/**
 * The language new uploads are analysed in and the languages their scans are read in; an OCR language the setting
 * names that is not installed here is named with its package (its pages would be read in others).
 */
function languageSettings(projectId: string, csrfToken: string, v: LanguageSettingsView) {
  const chosen = v.ocrLanguages?.split('+') ?? [];
  const ocrBox = (code: string, note = '') =>
    html`<label class="check"><input type="checkbox" name="ocr_languages" value="${code}"${chosen.includes(code) ? html` checked` : null}> ${code}${note}</label>`;
  return html`<h2 id="languages">Languages</h2>
  <form method="post" action="/projects/${projectId}/languages" class="stack" id="languages-form">
    <input type="hidden" name="_csrf" value="${csrfToken}">
    <label>Document language <select name="language" aria-describedby="language-hint">
      <option value="">Detected for each passage</option>
      ${v.languages.map((l) => html`<option value="${l.code}"${l.code === v.language ? html` selected` : null}>${l.name} (${l.code})</option>`)}
    </select><span class="hint" id="language-hint">Keyword search reads new uploads’ words in this language (stems, compounds, word breaks). An upload may name its own.</span></label>
    ${
      v.ocr
        ? html`<fieldset aria-describedby="ocr-hint"><legend>OCR languages</legend>
      ${v.ocr.installed.map((code) => ocrBox(code))}${v.missing.map((m) => ocrBox(m.code, ' — not installed on this server'))}
      <p class="hint" id="ocr-hint">Scanned pages of new uploads are read in these. None ticked: the server’s default (${v.ocr.default}).</p>
    </fieldset>
    ${v.missing.map((m) => html`<p class="notice warning" role="note">OCR language “${m.code}” is not installed on this server (${m.install}): scans are read in the others ticked, or in ${v.ocr!.default}.</p>`)}`
        : html`<p class="muted">OCR is off on this server (--ocr off): scans are not read.</p>`
    }
    <p class="actions"><button type="submit" class="secondary">Save languages</button></p>
  </form>`;
}

function projectSettings(p: ProjectRow, csrfToken: string, languages: LanguageSettingsView | undefined, form?: { name: string; description: string }) {
  return html`<h2>Name and description</h2>
  <form method="post" action="/projects/${p.id}/edit" class="stack">
    <input type="hidden" name="_csrf" value="${csrfToken}">
    <label>Name <input type="text" name="name" maxlength="${maxlengthFor(MAX_NAME_CHARS)}" required value="${form?.name ?? p.name}"></label>
    <label>Description <textarea name="description" rows="2" maxlength="${maxlengthFor(MAX_DESCRIPTION_CHARS)}">${form?.description ?? p.description}</textarea></label>
    <p class="actions"><button type="submit" class="primary">Save</button></p>
  </form>
  ${languages ? languageSettings(p.id, csrfToken, languages) : null}
  <h2>Delete the project</h2>
  ${
    p.isDefault
      ? html`<p class="muted">The default project can’t be deleted.</p>`
      : html`<p>Its documents go with it, and search stops finding them at once.</p><p><a href="/projects/${p.id}/delete" class="button danger">Delete this project…</a></p>`
  }`;
}

/** `trashed`: the documents in the project's trash, which its counts leave out and which go with it too. */
export function projectDeletePage(d: { user: { email: string }; csrfToken: string; project: ProjectRow; trashed: number }) {
  const p = d.project;
  const trash = d.trashed > 0 ? html` and <strong>${plural(d.trashed, 'document')} in its trash</strong>` : null;
  return confirmPage({
    user: d.user,
    csrfToken: d.csrfToken,
    active: 'projects',
    title: `Delete “${p.name}”?`,
    body:
      p.documentCount === 0
        ? d.trashed === 0
          ? html`<p>This deletes the project. It has no documents. This can't be undone.</p>`
          : html`<p>This deletes the project${trash}. This can't be undone.</p>`
        : html`<p>This deletes the project and everything in it: <strong>${plural(p.documentCount, 'document')}</strong>
    (${p.chunkCount > 0 ? `${plural(p.chunkCount, 'chunk')}, ` : ''}${formatBytes(p.sizeBytes)} of original files)${trash}. Search stops finding ${p.documentCount === 1 ? 'it' : 'them'} at once,
    and this can't be undone.</p>`,
    action: `/projects/${p.id}/delete`,
    confirm: 'Delete project and its documents',
    cancel: `/projects/${p.id}/settings`,
  });
}
