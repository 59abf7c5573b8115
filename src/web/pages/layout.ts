import { type Html, html } from '../html.js';

export interface LayoutData {
  title: string;
  /** The signed-in user's email, when there is one: shows the settings menu and logout. */
  user?: { email: string } | null;
  csrfToken?: string;
  active?: 'keys' | 'applications' | 'connected';
}

export function layout(data: LayoutData, body: Html): Html {
  const nav = data.user
    ? html`<nav class="top">
        <a href="/settings/keys" class="${data.active === 'keys' ? 'active' : ''}">API Keys</a>
        <a href="/settings/applications" class="${data.active === 'applications' ? 'active' : ''}">Applications</a>
        <a href="/settings/connected" class="${data.active === 'connected' ? 'active' : ''}">Connected apps</a>
        <span class="spacer"></span>
        <span class="who">${data.user.email}</span>
        <form method="post" action="/logout" class="inline">
          <input type="hidden" name="_csrf" value="${data.csrfToken ?? ''}">
          <button type="submit" class="link">Log out</button>
        </form>
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
</head>
<body>
<header><a href="/" class="brand">docsearch</a>${nav}</header>
<main>${body}</main>
</body>
</html>`;
}
