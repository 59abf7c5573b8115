import { maxlengthFor } from '../../core/code-points.js';
import {
  MAX_EVERY_CHARS,
  MAX_GLOB_CHARS,
  MAX_GLOBS,
  MAX_S3_KEY_ID_CHARS,
  MAX_S3_REGION_CHARS,
  MAX_SOURCE_FOLDER_CHARS,
  MAX_SOURCE_SECRET_CHARS,
  MAX_SOURCE_URL_CHARS,
  MAX_SOURCE_USERNAME_CHARS,
} from '../../core/source-limits.js';
import { html, type Html } from '../html.js';

/** One option of a kind as its form asks for it: a label, an example or a default under it. */
export interface SourceField {
  /** The option's name (the form field is `secret_<name>` for a secret, else the name). */
  name: string;
  label: string;
  hint: string;
  type: 'text' | 'password' | 'number';
  /** The most characters its option takes (core/source-limits.ts); none for a number. */
  max?: number;
  /** A secret: sealed at rest, never shown back; left empty on the edit form it stays as it is. */
  secret?: boolean;
  autocomplete?: string;
}

/** What the form says about a kind: its name for people, what it is, an example URL, and its fields. */
export interface SourceKindForm {
  kind: string;
  title: string;
  about: string;
  /** An example URL a default server accepts (nothing is fetched when a source is added). */
  example: string;
  fields: readonly SourceField[];
  /** It takes globs of the paths to index and to leave out. */
  globs: boolean;
}

const USER: SourceField = { name: 'username', label: 'User name', hint: '', type: 'text', max: MAX_SOURCE_USERNAME_CHARS, autocomplete: 'off' };
const PASSWORD: SourceField = { name: 'password', label: 'Password', hint: '', type: 'password', max: MAX_SOURCE_SECRET_CHARS, secret: true, autocomplete: 'new-password' };

/** The kinds, in the order the form offers them. */
export const SOURCE_KIND_FORMS: readonly SourceKindForm[] = [
  {
    kind: 'web',
    title: 'Web site',
    about: 'Pages of a site or a part of one, from its sitemap or by following links.',
    example: 'https://docs.example.com/handbook/',
    globs: true,
    fields: [{ name: 'max_pages', label: 'At most pages', hint: 'Each pass lists at most this many pages. Empty: 1000.', type: 'number' }],
  },
  {
    kind: 'webdav',
    title: 'Nextcloud, ownCloud or WebDAV folder',
    about: 'A folder shared over WebDAV, with its files and subfolders.',
    example: 'https://cloud.example.com/remote.php/dav/files/me/Documents/',
    globs: true,
    fields: [
      { ...USER, hint: 'The account the folder belongs to, e.g. me.' },
      { ...PASSWORD, hint: 'Better an app password (Nextcloud: Settings → Security → Devices & sessions).' },
    ],
  },
  {
    kind: 's3',
    title: 'S3 bucket',
    about: 'The objects of a bucket under a prefix: AWS S3, MinIO, Garage, Ceph and others.',
    example: 's3://field-notes/survey/',
    globs: true,
    fields: [
      { name: 'endpoint', label: 'Endpoint', hint: 'e.g. https://minio.example.com:9000. Empty: AWS, in the region below.', type: 'text', max: MAX_SOURCE_URL_CHARS },
      { name: 'region', label: 'Region', hint: 'e.g. eu-central-1. Empty: us-east-1.', type: 'text', max: MAX_S3_REGION_CHARS },
      { name: 'access_key_id', label: 'Access key ID', hint: 'e.g. AKIAIOSFODNN7EXAMPLE. Empty: a public bucket.', type: 'text', max: MAX_S3_KEY_ID_CHARS, autocomplete: 'off' },
      { name: 'secret_access_key', label: 'Secret access key', hint: 'The secret of that access key.', type: 'password', max: MAX_SOURCE_SECRET_CHARS, secret: true, autocomplete: 'new-password' },
    ],
  },
  {
    kind: 'git',
    title: 'Git repository',
    about: 'The files of one branch of a repository, as they are at its latest commit.',
    example: 'https://git.example.com/team/handbook.git',
    globs: true,
    fields: [
      { name: 'branch', label: 'Branch', hint: 'e.g. main. Empty: the branch the repository’s HEAD names.', type: 'text', max: MAX_SOURCE_FOLDER_CHARS },
      { ...USER, hint: 'For a private repository, e.g. me. Empty: a public one.' },
      { ...PASSWORD, hint: 'A password or an access token.' },
    ],
  },
  {
    kind: 'imap',
    title: 'Mailbox (IMAP)',
    about: 'The messages of one mail folder, and their attachments.',
    example: 'imaps://mail.example.com/INBOX',
    globs: false,
    fields: [
      { ...USER, hint: 'The mailbox’s sign-in name, e.g. archive@example.com.' },
      { ...PASSWORD, hint: 'The mailbox’s password or an app password.' },
      { name: 'move_to', label: 'Then move to', hint: 'A folder each message moves to once indexed, e.g. Archive. Empty: messages stay.', type: 'text', max: MAX_SOURCE_FOLDER_CHARS },
    ],
  },
  {
    kind: 'folder',
    title: 'Folder on this server',
    about: 'A folder on the machine the server runs on, under one the operator allows.',
    example: 'file:///srv/docs',
    globs: true,
    fields: [],
  },
];

export const kindForm = (kind: string): SourceKindForm | undefined => SOURCE_KIND_FORMS.find((k) => k.kind === kind);

/** The schedules the picker offers (each at least the server's shortest). */
export const SCHEDULES: readonly { every: string; ms: number; label: string }[] = [
  { every: '15m', ms: 15 * 60_000, label: 'Every 15 minutes' },
  { every: '30m', ms: 30 * 60_000, label: 'Every 30 minutes' },
  { every: '1h', ms: 3_600_000, label: 'Every hour' },
  { every: '6h', ms: 6 * 3_600_000, label: 'Every 6 hours' },
  { every: '12h', ms: 12 * 3_600_000, label: 'Every 12 hours' },
  { every: '1d', ms: 86_400_000, label: 'Every day' },
  { every: '7d', ms: 7 * 86_400_000, label: 'Every week' },
];

/** The value of the picker that lets one type an interval. */
export const OTHER_SCHEDULE = 'other';

/**
 * The schedule picker: the usual intervals, and another one typed in the format shown. `every` is the current one
 * (`2h30m` when it is none of the usual: then "Another interval" is chosen with it typed).
 */
export function schedulePicker(every: string, minEveryMs: number): Html {
  const offered = SCHEDULES.filter((s) => s.ms >= minEveryMs);
  const usual = offered.some((s) => s.every === every);
  return html`<label>How often <select name="every" data-schedule aria-describedby="every-hint">${offered.map(
    (s) => html`<option value="${s.every}"${s.every === every ? html` selected` : null}>${s.label}</option>`,
  )}<option value="${OTHER_SCHEDULE}"${usual ? null : html` selected`}>Another interval…</option></select>
    <span class="hint" id="every-hint">How often it looks for new, changed and deleted items.</span></label>
  <label data-schedule-other>Another interval <input type="text" name="every_other" maxlength="${maxlengthFor(MAX_EVERY_CHARS)}" value="${usual ? '' : every}" aria-describedby="every-other-hint">
    <span class="hint" id="every-other-hint">Days, hours, minutes and seconds: e.g. 2h, 1h30m or 3d (at least ${Math.round(minEveryMs / 1000)} seconds, at most 30 days).</span></label>`;
}

/** A kind's own fields: `values` are the options as they are (never a secret's value), `set` the secrets set. */
export function kindFields(k: SourceKindForm, values: Record<string, unknown>, set: readonly string[] | null): Html {
  return html`${k.fields.map((f) => {
    const id = `opt-${f.name}`;
    const hint =
      f.secret && set !== null ? (set.includes(f.name) ? 'Set, and never shown: leave it empty to keep it, or type a new one.' : `Not set. ${f.hint}`) : f.hint;
    const value = f.secret ? '' : values[f.name] === undefined ? '' : String(values[f.name]);
    return html`<label>${f.label} <input type="${f.type}" name="${f.secret ? `secret_${f.name}` : f.name}" id="${id}"${f.max ? html` maxlength="${maxlengthFor(f.max)}"` : null}${
      f.type === 'number' ? html` min="1" inputmode="numeric"` : null
    } value="${value}"${f.autocomplete ? html` autocomplete="${f.autocomplete}"` : null} aria-describedby="${id}-hint">
    <span class="hint" id="${id}-hint">${hint}</span></label>`;
  })}${
    k.globs
      ? html`<label>Index only <textarea name="include" rows="2" maxlength="${GLOBS_MAXLENGTH}" aria-describedby="include-hint">${globList(values.include)}</textarea>
    <span class="hint" id="include-hint">One glob a line, e.g. **/*.md or docs/**. Empty: every file.</span></label>
  <label>Leave out <textarea name="exclude" rows="2" maxlength="${GLOBS_MAXLENGTH}" aria-describedby="exclude-hint">${globList(values.exclude)}</textarea>
    <span class="hint" id="exclude-hint">One glob a line, e.g. drafts/**. Documents of paths left out are removed at the next pass (the deletion guard still applies).</span></label>`
      : null
  }`;
}

/** The include or exclude box: as many globs as a source takes, each on its line. */
const GLOBS_MAXLENGTH = maxlengthFor(MAX_GLOBS * (MAX_GLOB_CHARS + 1));

const globList = (v: unknown): string => (Array.isArray(v) ? v.join('\n') : '');
