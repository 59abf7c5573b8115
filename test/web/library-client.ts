import { api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { waitFor } from '../helpers/eventually.js';
import type { WebClient } from '../server/web-client.js';

export { loggedIn } from '../server/web-client.js';

/** Posts files to a project's upload route as the page's script does (X-CSRF-Token), or as the bare form does. */
export async function uploadAs(
  web: WebClient,
  projectId: string,
  files: { name: string; body: string | Buffer }[],
  opts: { csrf?: string | null; via?: 'header' | 'field'; accept?: string } = {},
): Promise<{ status: number; body: any; location: string | null }> {
  const form = new FormData();
  const csrf = opts.csrf === undefined ? web.csrf : opts.csrf;
  const headers: Record<string, string> = { accept: opts.accept ?? 'application/json' };
  if (csrf !== null && opts.via === 'field') form.append('_csrf', csrf);
  else if (csrf !== null) headers['x-csrf-token'] = csrf;
  for (const f of files) form.append('file', new Blob([f.body]), f.name);
  // The client keeps the cookies the answer sets (the bare form's message for the next page), as a browser does.
  const res = await web.request('POST', `/projects/${projectId}/upload`, form, headers);
  let body: unknown = res.text;
  try {
    body = JSON.parse(res.text);
  } catch {
    body = res.text;
  }
  return { status: res.status, body, location: res.location };
}

/** Waits until each document is ready or failed (through the API, as the test's own observer). */
export async function waitSettled(d: Daemon, user: TestUser, ids: string[], timeoutMs = 120_000): Promise<Record<string, string>> {
  let states: Record<string, string> = {};
  return waitFor(
    async () => {
      states = {};
      for (const id of ids) states[id] = (await api(d, `/api/v1/documents/${id}`, { token: user.apiKey })).body.status;
      return Object.values(states).every((st) => st === 'ready' || st === 'failed') && states;
    },
    timeoutMs,
    'documents to settle',
    { intervalMs: 250 },
  ).catch((err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(states)}`);
  });
}
