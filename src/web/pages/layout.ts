import { type Html, html } from '../html.js';

type Section = 'search' | 'projects' | 'keys' | 'applications' | 'connected';

export interface LayoutData {
  title: string;
  /** The signed-in user's email, when there is one: shows the navigation and logout. */
  user?: { email: string } | null;
  csrfToken?: string;
  active?: Section;
  /** A page's own script from /static (besides app.js), loaded deferred. */
  script?: 'project.js';
}

const SETTINGS: readonly Section[] = ['keys', 'applications', 'connected'];

/** A navigation link, marked as the current page for assistive technology too. */
const link = (href: string, label: string, current: boolean) =>
  html`<a href="${href}"${current ? html` class="active" aria-current="page"` : null}>${label}</a>`;

export function layout(data: LayoutData, body: Html): Html {
  const inSettings = data.active !== undefined && SETTINGS.includes(data.active);
  const nav = data.user
    ? html`<nav class="top" aria-label="Main">
        ${link('/', 'Search', data.active === 'search')}
        ${link('/projects', 'Projects', data.active === 'projects')}
        ${link('/settings', 'Settings', inSettings)}
        <span class="spacer"></span>
        <span class="who">${data.user.email}</span>
        <form method="post" action="/logout" class="inline">
          <input type="hidden" name="_csrf" value="${data.csrfToken ?? ''}">
          <button type="submit" class="link">Log out</button>
        </form>
      </nav>`
    : null;
  const subnav =
    data.user && inSettings
      ? html`<nav class="sub" aria-label="Settings">
  ${link('/settings/keys', 'API Keys', data.active === 'keys')}
  ${link('/settings/applications', 'Applications', data.active === 'applications')}
  ${link('/settings/connected', 'Connected apps', data.active === 'connected')}
</nav>`
      : null;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${data.title} · docsearch</title>
<link rel="stylesheet" href="/static/app.css">
<script src="/static/app.js" defer></script>
${data.script ? html`<script src="/static/${data.script}" defer></script>` : null}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><a href="/" class="brand">docsearch</a>${nav}</header>
<main id="main">${subnav}${body}</main>
</body>
</html>`;
}
