import type { Daemon } from '../helpers/daemon.js';

/** A logged-in browser stand-in: keeps the session cookie, follows nothing on its own, fills forms. */
export interface WebSession {
  get(url: string): Promise<Response>;
  submit(html: string, action: string, extra: Record<string, string>): Promise<Response>;
}

const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The hidden inputs of the form posting to `action`. */
export function hiddenFields(html: string, action: string): Record<string, string> {
  const form = new RegExp(`<form[^>]*action="${action.replace(/[/.]/g, '\\$&')}"[^>]*>([\\s\\S]*?)</form>`).exec(html);
  if (!form) throw new Error(`no form posting to ${action} in:\n${html.slice(0, 2000)}`);
  const fields: Record<string, string> = {};
  for (const m of form[1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[decode(m[1]!)] = decode(m[2]!);
  return fields;
}

export async function webLogin(daemon: Daemon, email: string, password: string): Promise<WebSession> {
  let cookie = '';
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      if (pair!.startsWith('ds_session=')) cookie = pair!;
    }
    return res;
  };
  const session: WebSession = {
    get: async (url) => keep(await fetch(new URL(url, daemon.url), { headers: { cookie, accept: 'text/html' }, redirect: 'manual' })),
    submit: async (html, action, extra) =>
      keep(
        await fetch(new URL(action, daemon.url), {
          method: 'POST',
          headers: { cookie, accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded', origin: daemon.url },
          body: new URLSearchParams({ ...hiddenFields(html, action), ...extra }).toString(),
          redirect: 'manual',
        }),
      ),
  };
  const page = await (await session.get('/login')).text();
  const res = await session.submit(page, '/login', { email, password });
  if (res.status !== 302 && res.status !== 303) throw new Error(`web login failed: ${res.status} ${await res.text()}`);
  return session;
}
