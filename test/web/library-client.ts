import { api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { WebClient } from '../server/web-client.js';

/** Posts files to a project's upload route as the page's script does (X-CSRF-Token), or as the bare form does. */
export async function uploadAs(
  web: WebClient,
  d: Daemon,
  projectId: string,
  files: { name: string; body: string | Buffer }[],
  opts: { csrf?: string | null; via?: 'header' | 'field'; accept?: string } = {},
): Promise<{ status: number; body: any; location: string | null }> {
  const form = new FormData();
  const csrf = opts.csrf === undefined ? web.csrf : opts.csrf;
  const headers: Record<string, string> = {
    accept: opts.accept ?? 'application/json',
    cookie: [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
  };
  if (csrf !== null && opts.via === 'field') form.append('_csrf', csrf);
  else if (csrf !== null) headers['x-csrf-token'] = csrf;
  for (const f of files) form.append('file', new Blob([f.body]), f.name);
  const res = await fetch(`${d.url}/projects/${projectId}/upload`, { method: 'POST', headers, body: form, redirect: 'manual' });
  // Cookies the answer sets (the bare form's message for the next page) go to the client, as a browser keeps them.
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const [name, value] = [pair!.slice(0, pair!.indexOf('=')).trim(), pair!.slice(pair!.indexOf('=') + 1).trim()];
    if (value === '' || /max-age=0/i.test(line)) web.cookies.delete(name);
    else web.cookies.set(name, value);
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body, location: res.headers.get('location') };
}

/** Waits until each document is ready or failed (through the API, as the test's own observer). */
export async function waitSettled(d: Daemon, user: TestUser, ids: string[], timeoutMs = 120_000): Promise<Record<string, string>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const states: Record<string, string> = {};
    for (const id of ids) states[id] = (await api(d, `/api/v1/documents/${id}`, { token: user.apiKey })).body.status;
    if (Object.values(states).every((st) => st === 'ready' || st === 'failed')) return states;
    if (Date.now() > deadline) throw new Error(`documents did not settle: ${JSON.stringify(states)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A logged-in page client. */
export async function loggedIn(d: Daemon, user: TestUser): Promise<WebClient> {
  const web = new WebClient(d);
  const res = await web.login(user.email, user.password);
  if (res.status !== 302) throw new Error(`login failed: ${res.status}`);
  return web;
}
