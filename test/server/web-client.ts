import type { Daemon, TestUser } from '../helpers/daemon.js';

export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The Location header of a redirect, if any. */
  location: string | null;
}

/**
 * A minimal form-posting browser for the server-rendered pages, the tests' one web client: keeps cookies, never
 * follows redirects (tests assert them), and reads the CSRF token out of the last page it saw.
 */
export class WebClient {
  readonly cookies = new Map<string, string>();
  lastPage = '';
  /** Sent with every request (a test's X-Forwarded-For, on a daemon started with --trust-proxy). */
  readonly headers: Record<string, string> = {};

  constructor(private readonly daemon: Daemon) {}

  get sessionCookie(): string | undefined {
    return this.cookies.get('ds_session');
  }

  /** The `_csrf` value of the first form on the last page. */
  get csrf(): string {
    const m = /name="_csrf" value="([^"]*)"/.exec(this.lastPage);
    if (!m) throw new Error(`no _csrf field on the last page:\n${this.lastPage.slice(0, 500)}`);
    return m[1]!;
  }

  get(path: string): Promise<PageResponse> {
    return this.request('GET', path);
  }

  post(path: string, form: Record<string, string | string[]>): Promise<PageResponse> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const item of Array.isArray(v) ? v : [v]) body.append(k, item);
    return this.request('POST', path, body);
  }

  /**
   * Posts a form as a browser does: a 303 answer (Post/Redirect/Get) is followed with a GET, whose page is returned
   * (with `redirectedFrom`, the POST's own answer). Other answers are returned as they are.
   */
  async submit(path: string, form: Record<string, string | string[]>): Promise<PageResponse & { redirectedFrom?: PageResponse }> {
    const posted = await this.post(path, form);
    if (posted.status !== 303 || !posted.location) return posted;
    return { ...(await this.get(posted.location)), redirectedFrom: posted };
  }

  /**
   * One request with the client's cookies, its answer's cookies kept. A form is sent urlencoded, FormData as
   * multipart (the page script's uploads), a string as it is; `extra` headers go on top of the client's (`accept` is text/html).
   */
  async request(method: string, path: string, body?: URLSearchParams | FormData | string, extra: Record<string, string> = {}): Promise<PageResponse> {
    const headers: Record<string, string> = { accept: 'text/html', ...this.headers, ...extra };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body instanceof URLSearchParams) headers['content-type'] = 'application/x-www-form-urlencoded';
    const url = path.startsWith('http') ? path : this.daemon.url + path;
    const res = await fetch(url, { method, headers, body, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /max-age=0|expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    // A redirect's body is never a page a browser shows: the last page stays the one the form was on.
    const redirect = res.status >= 300 && res.status < 400;
    if (!redirect && res.headers.get('content-type')?.includes('text/html')) this.lastPage = text;
    return { status: res.status, headers: res.headers, text, location: res.headers.get('location') };
  }

  /** A JSON POST as the pages' script sends one (the passkey ceremonies): the CSRF token in X-CSRF-Token, JSON back. */
  postJson(path: string, body: unknown, csrf = this.csrf): Promise<PageResponse> {
    return this.request('POST', path, JSON.stringify(body), { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': csrf });
  }

  /** Logs in through the login form; returns the final response of the POST. */
  async login(email: string, password: string): Promise<PageResponse> {
    await this.get('/login');
    return this.post('/login', { _csrf: this.csrf, email, password, return_to: '' });
  }
}

/** A client logged in as `user` through the login form. */
export async function loggedIn(d: Daemon, user: TestUser): Promise<WebClient> {
  const web = new WebClient(d);
  const res = await web.login(user.email, user.password);
  if (res.status !== 302) throw new Error(`login failed: ${res.status}`);
  return web;
}

const unescape = (s: string) =>
  s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#96;/g, '`').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The hidden fields of the form on `page` that posts to `action`, unescaped. */
export function hiddenFields(page: string, action: string): Record<string, string> {
  const form = new RegExp(`<form[^>]*action="${action.replace(/[/.]/g, '\\$&')}"[^>]*>([\\s\\S]*?)</form>`).exec(page)?.[1];
  if (!form) throw new Error(`no form posting to ${action} on the page:\n${page.slice(0, 800)}`);
  const fields: Record<string, string> = {};
  for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[unescape(m[1]!)] = unescape(m[2]!);
  return fields;
}

/** The key shown once after generating one on Settings → API Keys. */
export function newKeyOnPage(html: string): string | null {
  return /id="new-key" readonly value="(dsk_[0-9A-Za-z]+)"/.exec(html)?.[1] ?? null;
}
