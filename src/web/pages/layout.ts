import { maxlengthFor } from '../../core/code-points.js';
import { assetUrl } from '../asset-url.js';
import { MAX_QUERY_CHARS } from '../../core/search-limits.js';
import { type Html, html, raw } from '../html.js';

/** Where a page sits: its top navigation entry, and (documents, trash, settings, admin) its sub-navigation. `document` is one document's pages. */
export type Section = 'search' | 'documents' | 'trash' | 'document' | 'projects' | 'keys' | 'applications' | 'connected' | 'account' | 'security' | 'admin-users' | 'admin-groups' | 'admin-sharing' | 'audit' | 'admin-mail' | 'admin-sources' | 'notices';

export interface LayoutData {
  title: string;
  /** The signed-in user's email, when there is one: shows the navigation and logout (and Admin, for admins). */
  user?: { email: string; isAdmin?: boolean } | null;
  csrfToken?: string;
  active?: Section;
  /** A page's own script from /static (besides app.js), loaded deferred. */
  script?: 'project.js' | 'passkeys.js';
  /** A list page (tables): main takes up to 1440 px instead of 960. */
  wide?: boolean;
}

/** What a form just did, shown once on the page it led to (see server/web/session.ts `flash`). */
export interface Flash {
  kind: 'notice' | 'error';
  text: string;
  /** Documents just moved to the trash: the notice offers to put them back (POST /trash/restore). */
  undo?: readonly string[];
}

const SETTINGS: readonly Section[] = ['keys', 'applications', 'connected', 'account', 'security'];
const LIBRARY: readonly Section[] = ['documents', 'trash', 'document'];
const ADMIN: readonly Section[] = ['admin-users', 'admin-groups', 'admin-sharing', 'admin-sources', 'audit', 'admin-mail'];

/** Where the theme goes (withTheme): the page's first element. */
const HTML_OPEN = '<html lang="en">';
const HTML_OPEN_AT = `<!doctype html>\n${HTML_OPEN}`;
/** Where the flash goes: right after main opens. layout() writes one of these exactly once per page. */
const MAIN_OPEN = '<main id="main">';
const MAIN_OPEN_WIDE = '<main id="main" class="wide">';
/** Where the bell goes (withBell): first in the header's account corner, which only a signed-in page has. */
const ACCOUNT_OPEN = '<div class="account">';

/** A navigation link, marked as the current page for assistive technology too. */
const link = (href: string, label: string, current: boolean) =>
  html`<a href="${href}"${current ? html` class="active" aria-current="page"` : null}>${label}</a>`;

/** The `/` key's shortcut, on the search box it focuses (app.js focuses the box that carries it). */
export const SLASH_SHORTCUT = raw('aria-keyshortcuts="/"');
const SHORTCUT_HINT = 'Search (press /)';

/** The header's search box, on every page but search itself (which has its own). */
const headerSearch = html`<form method="get" action="/search" role="search" class="site-search">
  <label for="site-search" class="visually-hidden">Search your library</label>
  <input type="search" id="site-search" name="q" maxlength="${maxlengthFor(MAX_QUERY_CHARS)}" placeholder="${SHORTCUT_HINT}" ${SLASH_SHORTCUT} required>
</form>`;

export function layout(data: LayoutData, body: Html): Html {
  const inSettings = data.active !== undefined && SETTINGS.includes(data.active);
  const inAdmin = data.active !== undefined && ADMIN.includes(data.active);
  const nav = data.user
    ? html`<nav class="top" aria-label="Main">
        ${link('/', 'Search', data.active === 'search')}
        ${link('/documents', 'Documents', data.active !== undefined && LIBRARY.includes(data.active))}
        ${link('/projects', 'Projects', data.active === 'projects')}
        ${link('/settings', 'Settings', inSettings)}
        ${data.user.isAdmin ? link('/admin', 'Admin', inAdmin) : null}
      </nav>
      ${data.active === 'search' ? null : headerSearch}
      ${raw(ACCOUNT_OPEN)}
        <span class="who">${data.user.email}</span>
        <form method="post" action="/logout" class="inline">
          <input type="hidden" name="_csrf" value="${data.csrfToken ?? ''}">
          <button type="submit" class="link">Sign out</button>
        </form>
      </div>`
    : null;
  const subnav =
    data.user && (data.active === 'documents' || data.active === 'trash')
      ? html`<nav class="sub" aria-label="Library">
  ${link('/documents', 'All documents', data.active === 'documents')}
  ${link('/trash', 'Trash', data.active === 'trash')}
</nav>`
      : data.user && inSettings
      ? html`<nav class="sub" aria-label="Settings">
  ${link('/settings/keys', 'API Keys', data.active === 'keys')}
  ${link('/settings/applications', 'Applications', data.active === 'applications')}
  ${link('/settings/connected', 'Connected apps', data.active === 'connected')}
  ${link('/settings/account', 'Account', data.active === 'account')}
  ${link('/settings/security', 'Security', data.active === 'security')}
</nav>`
        : data.user && inAdmin
        ? html`<nav class="sub" aria-label="Admin">
  ${link('/admin/users', 'Users', data.active === 'admin-users')}
  ${link('/admin/groups', 'Groups', data.active === 'admin-groups')}
  ${link('/admin/sharing', 'Sharing', data.active === 'admin-sharing')}
  ${link('/admin/sources', 'Sources', data.active === 'admin-sources')}
  ${link('/admin/audit', 'Audit log', data.active === 'audit')}
  ${link('/admin/mail', 'Mail', data.active === 'admin-mail')}
</nav>`
        : null;
  return html`${raw(HTML_OPEN_AT)}
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${data.title} · docsearch</title>
<link rel="icon" href="/favicon.ico">
<link rel="stylesheet" href="${assetUrl('app.css')}">
<script src="${assetUrl('app.js')}" defer></script>
${data.script ? html`<script src="${assetUrl(data.script)}" defer></script>` : null}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><a href="/" class="brand">docsearch</a>${nav}</header>
${raw(data.wide ? MAIN_OPEN_WIDE : MAIN_OPEN)}${subnav}${body}</main>
</body>
</html>`;
}

/** The in-app theme (Settings → Account → Appearance): the system's, or light or dark whatever the system says. */
export type Theme = 'system' | 'light' | 'dark';
export const THEMES: readonly Theme[] = ['system', 'light', 'dark'];

/** The page drawn in `theme` (`<html data-theme>`, which app.css's tokens follow); the system's needs nothing. */
export function withTheme(page: Html, theme: Theme): Html {
  if (theme === 'system' || !page.value.startsWith(HTML_OPEN_AT)) return page;
  return raw(page.value.replace(HTML_OPEN, `<html lang="en" data-theme="${theme}">`)); // the theme is one of THEMES
}

/**
 * The page without the `/` shortcut, turned off in this browser (Settings → Account): a shortcut of one character key
 * must be one a person can turn off (WCAG 2.1.4; speech input types slashes, a stray key press moves the focus). No
 * box carries it, so app.js has none to focus, and the header's box no longer offers it.
 */
export function withoutShortcut(page: Html): Html {
  return raw(page.value.replaceAll(` ${SLASH_SHORTCUT.value}`, '').replace(`placeholder="${SHORTCUT_HINT}"`, 'placeholder="Search"')); // markup we wrote
}

/** The page with the header's bell: the signed-in person's notices, and how many are unread. */
export function withBell(page: Html, unread: number): Html {
  const at = page.value.indexOf(ACCOUNT_OPEN);
  if (at < 0) return page;
  const bell = html`<a href="/notices" class="bell${unread > 0 ? ' unread' : ''}">Notices${unread > 0 ? html` <span class="badge warn" aria-label="${unread} unread">${unread > 99 ? '99+' : unread}</span>` : null}</a>`;
  const end = at + ACCOUNT_OPEN.length;
  return raw(page.value.slice(0, end) + bell.value + page.value.slice(end)); // both parts are markup we wrote
}

/** The page with `flash` as its first words in main, announced to screen readers. */
export function withFlash(page: Html, flash: Flash, form?: { csrfToken: string; returnTo: string }): Html {
  const undo =
    flash.undo?.length && form
      ? html` <form method="post" action="/trash/restore" class="inline"><input type="hidden" name="_csrf" value="${form.csrfToken}"><input type="hidden" name="return_to" value="${form.returnTo}">${flash.undo.map((id) => html`<input type="hidden" name="ids" value="${id}">`)}<button type="submit" class="link">Undo</button></form>`
      : null;
  const note =
    flash.kind === 'error'
      ? html`<p class="error flash" role="alert">${flash.text}</p>`
      : undo
        ? html`<div class="notice flash" role="status">${flash.text}${undo}</div>`
        : html`<p class="notice flash" role="status">${flash.text}</p>`;
  const open = page.value.includes(MAIN_OPEN) ? MAIN_OPEN : MAIN_OPEN_WIDE;
  const at = page.value.indexOf(open);
  if (at < 0) return page;
  const end = at + open.length;
  return raw(page.value.slice(0, end) + note.value + page.value.slice(end)); // both parts are markup we wrote
}

/**
 * The trail above a page's heading: each step a link, the page itself being the heading (never repeated here).
 * An ordered list in a labelled nav, as the WAI breadcrumb pattern has it; the separators are drawn by CSS.
 */
export function crumbs(steps: readonly { href: string; label: string }[]): Html {
  return html`<nav class="crumbs" aria-label="Breadcrumb"><ol>${steps.map((s) => html`<li><a href="${s.href}">${s.label}</a></li>`)}</ol></nav>`;
}
