/**
 * The web UI crawled as each role sees it, over plain HTTP with the session cookie: from the start page, every
 * same-origin link (a href) and every GET form (as sent with its defaults, and once with each other option of each of
 * its selects) is followed breadth-first, up to a bound, each image (img src) fetched, and each answer is held to what
 * the UI promises:
 * - no 5xx, and no 4xx at all: a link or a form's option that answers 403 or 404 (or 400) offered the person something
 *   they cannot do or see; a redirect stays on this origin and never leads a signed-in person to the sign-in page;
 * - every page has a <title> of its own, one <h1>, and a name for every control (inputs, selects and textareas by a
 *   label — `for=`, wrapping, aria-label or aria-labelledby; links and buttons by their text or aria-label); its ids
 *   are each on one element, and every reference to one (for=, aria-labelledby, -describedby, list=, form=) finds it;
 * - no page shows a role what is not theirs to see: the names and ids of documents (trashed ones included), projects,
 *   sources and saved searches of projects they do not read.
 *
 * every-page.browser.test.ts draws a fixed list of pages in Chromium against the design system and axe; this file
 * needs no browser and finds its pages itself, as four people: Ada (admin, owner of both projects), Eddie (editor of
 * one), Bob (viewer of it) and Nora (nothing shared with her).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DomUtils, parseDocument } from 'htmlparser2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, REPO, removeDir, startDaemon, type TestUser } from '../helpers/daemon.js';
import { makePdf } from '../ingest/build-fixtures.js';
import { loggedIn, type WebClient } from '../server/web-client.js';

type Element = ReturnType<typeof DomUtils.getElementsByTagName>[number];
type Role = 'ada' | 'eddie' | 'bob' | 'nora';

/**
 * The bounds of a crawl: pages one role may fetch; links followed to one path (its ids as `:id`), and to one shape
 * of it (that path and the names in its query: the search page's facets combine without end).
 */
const MAX_PAGES = 400;
const PER_PATH = 40;
const PER_SHAPE = 12;
/** The text typed into a GET form's empty required field (the search box): a word the library holds. */
const TYPED = 'harbour';

const fixture = (name: string) => readFileSync(join(REPO, 'test/fixtures/formats', name));

/** What each person made, and what each may not see. */
interface Library {
  d: Daemon;
  users: Record<Role, TestUser>;
  harbour: string;
  papers: string;
  docs: Record<string, string>;
  labelId: string;
  sourceId: string;
  /** Strings (names, ids) that must appear on none of a role's pages; for Ada, but on the audit log (see below). */
  forbidden: Record<Role, string[]>;
}

/** A page's problems, links and GET form submissions. */
interface Page {
  problems: string[];
  links: { url: string; file: boolean }[];
  /** Each submission, with what makes it one of its own: the form's action and fields, and the option it swaps in. */
  forms: { url: string; key: string }[];
}

/** An element (domhandler's isTag is not among htmlparser2's exports): what has attributes. */
const isElement = (node: unknown): node is Element => typeof node === 'object' && node !== null && 'attribs' in node;

const pathOf = (url: URL) => url.pathname.replace(/\/[a-z]{2,6}_[0-9A-Za-z]{6,}(?=\/|$)/g, '/:id');
const shapeOf = (url: URL) => `${pathOf(url)}?${[...new Set(url.searchParams.keys())].sort().join('&')}`;

/** Text a person reads in `node`, without what the controls inside it hold (a select's options are not its label). */
function readText(node: Element): string {
  let out = '';
  for (const child of node.children) {
    if (child.type === 'text') out += (child as unknown as { data: string }).data;
    else if (isElement(child) && !['select', 'textarea', 'datalist', 'script', 'style'].includes(child.name)) {
      out += child.name === 'img' ? (child.attribs.alt ?? '') : readText(child);
    }
  }
  return out.replace(/\s+/g, ' ').trim();
}

const hiddenFromAll = (el: Element): boolean => {
  for (let a: Element | null = el; a && isElement(a); a = a.parent as Element | null) if ('hidden' in a.attribs) return true;
  return false;
};

/** The problems of one HTML page, and where it leads. */
function readPage(text: string, at: URL, forbidden: readonly string[]): Page {
  const problems: string[] = [];
  const doc = parseDocument(text);
  const all = DomUtils.findAll(() => true, doc.children);
  const byTag = (name: string) => all.filter((e) => e.name === name);

  const titles = byTag('title');
  const title = titles[0] ? readText(titles[0]) : '';
  if (titles.length !== 1 || title.replace(/·\s*docsearch$/, '').trim() === '') problems.push(`its <title> is ${titles.length === 1 ? `"${title}"` : `${titles.length} elements`}`);
  const h1s = byTag('h1');
  if (h1s.length !== 1) problems.push(`it has ${h1s.length} <h1> (${h1s.map((h) => `"${readText(h)}"`).join(', ')})`);

  const byId = new Map(all.filter((e) => e.attribs.id).map((e) => [e.attribs.id!, e]));
  // A label, description or list that names an element by id finds exactly one.
  const ids = all.flatMap((e) => (e.attribs.id ? [e.attribs.id] : []));
  for (const id of new Set(ids.filter((id, i) => ids.indexOf(id) !== i))) problems.push(`the id "${id}" is on ${ids.filter((x) => x === id).length} elements`);
  for (const el of all) {
    const refs = [el.attribs['aria-labelledby'], el.attribs['aria-describedby'], el.attribs['aria-controls'], el.name === 'label' ? el.attribs.for : undefined, el.name === 'input' ? el.attribs.list : undefined, el.attribs.form];
    for (const id of refs.flatMap((r) => r?.split(/\s+/).filter(Boolean) ?? [])) if (!byId.has(id)) problems.push(`a ${el.name} refers to the id "${id}", which no element has`);
  }
  const labelled = new Set(byTag('label').filter((l) => l.attribs.for && readText(l) !== '').map((l) => l.attribs.for!));
  const nameOf = (el: Element): string => {
    const aria = el.attribs['aria-label']?.trim();
    if (aria) return aria;
    const by = el.attribs['aria-labelledby']?.split(/\s+/).map((id) => (byId.get(id) ? readText(byId.get(id)!) : '')).join(' ').trim();
    if (by) return by;
    if (['input', 'select', 'textarea'].includes(el.name)) {
      if (el.attribs.id && labelled.has(el.attribs.id)) return 'label';
      for (let a = el.parent as Element | null; a && isElement(a); a = a.parent as Element | null) if (a.name === 'label') return readText(a);
      return '';
    }
    return readText(el) || (el.attribs.value ?? '');
  };
  for (const el of all) {
    const control = ['select', 'textarea'].includes(el.name) || (el.name === 'input' && !['hidden', 'submit', 'button', 'reset', 'image'].includes(el.attribs.type ?? 'text'));
    const action = el.name === 'button' || (el.name === 'a' && el.attribs.href !== undefined);
    if ((control || action) && !hiddenFromAll(el) && nameOf(el) === '') {
      problems.push(`a ${el.name}${el.attribs.name ? ` "${el.attribs.name}"` : ''}${el.attribs.href ? ` to ${el.attribs.href}` : ''} has no name a screen reader can say`);
    }
  }

  // In the markup (attributes too) or in the words read: a name broken with <wbr> is whole only there.
  const read = DomUtils.textContent(doc);
  for (const s of forbidden) if (text.includes(s) || read.includes(s)) problems.push(`it shows "${s}", which is not theirs to see`);

  const links: Page['links'] = [];
  // Links, and the images a page shows (a thumbnail that answers 404 is a broken picture): those only for their answer.
  const targets = [...byTag('a').map((a) => ({ to: a.attribs.href, file: a.attribs.download !== undefined })), ...byTag('img').map((img) => ({ to: img.attribs.src, file: true }))];
  for (const { to, file } of targets) {
    if (to === undefined || to.startsWith('#')) continue;
    const url = new URL(to, at);
    if (url.origin !== at.origin) continue;
    url.hash = '';
    links.push({ url: url.pathname + url.search, file });
  }

  const forms: Page['forms'] = [];
  for (const form of byTag('form').filter((f) => (f.attribs.method ?? 'get').toLowerCase() === 'get')) {
    const action = new URL(form.attribs.action ?? at.href, at);
    if (action.origin !== at.origin) continue;
    const fields = DomUtils.findAll((e) => ['input', 'select', 'textarea'].includes(e.name) && e.attribs.name !== undefined && !('disabled' in e.attribs), form.children);
    const defaults: [Element, string[]][] = fields.map((f) => {
      if (f.name === 'select') {
        const options = DomUtils.getElementsByTagName('option', f);
        const chosen = options.filter((o) => 'selected' in o.attribs);
        return [f, (chosen.length ? chosen : options.slice(0, 1)).map((o) => o.attribs.value ?? readText(o))];
      }
      if (f.name === 'textarea') return [f, [readText(f)]];
      const type = f.attribs.type ?? 'text';
      if (type === 'checkbox' || type === 'radio') return [f, 'checked' in f.attribs ? [f.attribs.value ?? 'on'] : []];
      if (['submit', 'button', 'reset', 'image', 'file'].includes(type)) return [f, []];
      return [f, [f.attribs.value || ('required' in f.attribs ? TYPED : '')]];
    });
    const names = [...new Set(defaults.map(([f]) => f.attribs.name!))].sort().join('&');
    const submit = (swap?: [Element, string]) => {
      const params = new URLSearchParams();
      for (const [f, values] of defaults) for (const v of swap?.[0] === f ? [swap[1]] : values) params.append(f.attribs.name!, v);
      forms.push({ url: `${action.pathname}?${params.toString()}`, key: `${action.pathname}?${names} ${swap ? `${swap[0].attribs.name}=${swap[1]}` : '(as it is)'}` });
    };
    submit();
    for (const [f, values] of defaults) {
      if (f.name !== 'select') continue;
      for (const o of DomUtils.getElementsByTagName('option', f)) {
        const v = o.attribs.value ?? readText(o);
        if (!values.includes(v)) submit([f, v]);
      }
    }
  }
  return { problems, links, forms };
}

interface Crawl {
  /** Each URL fetched, with the status it finally answered. */
  visited: Map<string, number>;
  problems: string[];
  ms: number;
}

/**
 * Breadth-first from `/`, as `role`: each URL once, links within PER_PATH and PER_SHAPE, each form's option once
 * (with the other fields as the page that first offered it had them), MAX_PAGES in all.
 */
async function crawl(web: WebClient, base: string, role: Role, forbidden: (path: string) => readonly string[]): Promise<Crawl> {
  const t0 = performance.now();
  const visited = new Map<string, number>();
  const problems: string[] = [];
  const offered = new Map<string, number>();
  const queue: { url: string; from: string; file: boolean }[] = [{ url: '/', from: '(start)', file: false }];
  const queued = new Set(['/']);
  const counted = (key: string, limit: number) => (offered.get(key) ?? 0) < limit;
  const count = (key: string) => offered.set(key, (offered.get(key) ?? 0) + 1);
  const offer = (url: string, from: string, file: boolean, form?: string) => {
    if (queued.has(url) || url.startsWith('/static/') || url === '/favicon.ico') return;
    const at = new URL(url, base);
    const keys = form ? [form] : [pathOf(at), shapeOf(at)];
    if (!(form ? counted(form, 1) : counted(keys[0]!, PER_PATH) && counted(keys[1]!, PER_SHAPE))) return;
    keys.forEach(count);
    queued.add(url);
    queue.push({ url, from, file });
  };
  while (queue.length > 0 && visited.size < MAX_PAGES) {
    const { url, from, file } = queue.shift()!;
    const trail = [url];
    let res = await web.get(url);
    while (res.status >= 300 && res.status < 400 && res.location && trail.length < 6) {
      const next = new URL(res.location, base + trail.at(-1)!);
      if (next.origin !== base) {
        problems.push(`${from} → ${trail.join(' → ')} redirects off this site, to ${next.href}`);
        break;
      }
      trail.push(next.pathname + next.search);
      if (next.pathname === '/login') problems.push(`${from} → ${trail.join(' → ')}: a signed-in person is sent to sign in`);
      queued.add(trail.at(-1)!);
      res = await web.get(trail.at(-1)!);
    }
    const at = trail.at(-1)!;
    for (const hop of trail) visited.set(hop, res.status);
    const where = `${from} → ${trail.join(' → ')}`;
    if (res.status >= 500) problems.push(`${where} answers ${res.status}`);
    else if (res.status >= 400) problems.push(`${where} answers ${res.status}: the UI offers what ${role} cannot open`);
    if (file || !res.headers.get('content-type')?.includes('text/html')) continue;
    const page = readPage(res.text, new URL(at, base), forbidden(at));
    problems.push(...page.problems.map((p) => `${at} (reached from ${from}): ${p}`));
    for (const link of page.links) offer(link.url, at, link.file);
    for (const form of page.forms) offer(form.url, `a form on ${at}`, false, form.key);
  }
  return { visited, problems, ms: performance.now() - t0 };
}

describe('every link and GET form of the web UI, followed as each role', () => {
  const lib = {} as Library;
  const crawls = new Map<Role, Crawl>();

  beforeAll(async () => {
    const d = await startDaemon();
    lib.d = d;
    // The first account is the library's admin.
    const users = {} as Record<Role, TestUser>;
    for (const role of ['ada', 'eddie', 'bob', 'nora'] as const) users[role] = await addUser(d, { email: `${role}@example.com` });
    lib.users = users;
    const as = (role: Role) => ({ token: users[role].apiKey });
    const ok = async (res: Promise<{ status: number; body: any }>) => {
      const r = await res;
      expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
      return r.body;
    };
    lib.harbour = (await ok(api(d, '/api/v1/projects', { ...as('ada'), body: { name: 'Harbour office', description: 'Berths, cranes and tides' } }))).id;
    lib.papers = (await ok(api(d, '/api/v1/projects', { ...as('ada'), body: { name: 'Ada private papers' } }))).id;
    await ok(api(d, `/api/v1/projects/${lib.harbour}/members`, { ...as('ada'), body: { email: 'eddie@example.com', role: 'editor' } }));
    await ok(api(d, `/api/v1/projects/${lib.harbour}/members`, { ...as('ada'), body: { email: 'bob@example.com', role: 'viewer' } }));
    const own = async (role: Role) => ((await ok(api(d, '/api/v1/projects', as(role)))).projects as { id: string; is_default: boolean }[]).find((p) => p.is_default)!.id;

    const upload = async (role: Role, projectId: string, files: [string, Buffer][]) => {
      const form = new FormData();
      form.append('project_id', projectId);
      for (const [name, bytes] of files) form.append('file', new Blob([bytes]), name);
      const res = await fetch(`${d.url}/api/v1/upload?wait=true&wait_timeout=120`, { method: 'POST', headers: { authorization: `Bearer ${users[role].apiKey}` }, body: form });
      const docs = ((await res.json()) as { documents: { id: string; status: string }[] }).documents;
      expect(docs.map((x) => x.status)).toEqual(files.map(() => 'ready'));
      files.forEach(([name], i) => (lib.docs[name] = docs[i]!.id));
    };
    lib.docs = {};
    const pdf = makePdf([[{ lines: ['The harbour crane lifted the pilot boat at dawn.', 'The quay was closed for the storm.'] }], [{ lines: ['Page two lists the harbour dues.'] }]]);
    await upload('ada', lib.harbour, [
      ['harbour-crane-logbook.pdf', pdf],
      ['harbour-tide-report.docx', fixture('report.docx')],
      ['harbour-berth-list.csv', fixture('berths.csv')],
      ['harbour-pilot-notes.md', fixture('notes.md')],
      ['harbour-storm-message.eml', fixture('message.eml')],
      ['harbour-quay-page.html', fixture('page.html')],
      ['harbour-trashed-minutes.txt', Buffer.from('The harbour board minutes, thrown away.\n')],
    ]);
    await upload('ada', lib.papers, [
      ['ada-private-ledger.txt', Buffer.from('The harbour ledger of Ada alone: salaries and dues.\n')],
      ['ada-salary-review.txt', Buffer.from('A salary review for the harbour staff.\n')],
    ]);
    await upload('bob', await own('bob'), [['bob-own-diary.txt', Buffer.from("Bob's diary of the harbour walks.\n")]]);
    await upload('nora', await own('nora'), [['nora-recipe-notes.txt', Buffer.from('Fish soup as they make it at the harbour.\n')]]);
    await ok(api(d, `/api/v1/documents/${lib.docs['harbour-trashed-minutes.txt']}`, { ...as('ada'), method: 'DELETE' }));
    await ok(api(d, `/api/v1/documents/${lib.docs['harbour-crane-logbook.pdf']}`, { ...as('ada'), method: 'PATCH', body: { labels: ['unpaid', 'harbour-dues'] } }));
    await ok(api(d, `/api/v1/documents/${lib.docs['ada-private-ledger.txt']}`, { ...as('ada'), method: 'PATCH', body: { labels: ['ada-secret-label'] } }));
    lib.labelId = ((await ok(api(d, `/api/v1/projects/${lib.harbour}/labels`, as('ada')))).labels as { id: string; name: string }[]).find((l) => l.name === 'unpaid')!.id;
    await ok(api(d, '/api/v1/saved-searches', { ...as('ada'), body: { name: 'Harbour cranes shared', search: { query: 'crane' }, project_id: lib.harbour } }));
    await ok(api(d, '/api/v1/saved-searches', { ...as('ada'), body: { name: 'Ledger audit of Ada', search: { query: 'ledger', project_ids: [lib.papers] } } }));
    // A source whose host does not exist: it fails, and its card says so.
    lib.sourceId = (await ok(api(d, `/api/v1/projects/${lib.harbour}/sources`, { ...as('ada'), body: { url: 'https://docs.invalid/handbook/', kind: 'web', every: '1h' } }))).id;

    const docsOf = (...names: string[]) => names.flatMap((n) => [n, lib.docs[n]!]);
    const harbourDocs = Object.keys(lib.docs).filter((n) => n.startsWith('harbour-') && n !== 'harbour-trashed-minutes.txt');
    const papers = [...docsOf('ada-private-ledger.txt', 'ada-salary-review.txt'), 'Ada private papers', lib.papers, 'ada-secret-label', 'Ledger audit of Ada'];
    const bobs = docsOf('bob-own-diary.txt');
    const noras = docsOf('nora-recipe-notes.txt');
    lib.forbidden = {
      // An admin reads no one's documents; the audit log names what was done to them (its own page, exempt below).
      ada: [...bobs, ...noras],
      eddie: [...papers, ...bobs, ...noras],
      // A viewer sees neither a project's trash nor its sources.
      bob: [...papers, ...noras, ...docsOf('harbour-trashed-minutes.txt'), 'docs.invalid'],
      nora: [...papers, ...bobs, ...docsOf(...harbourDocs, 'harbour-trashed-minutes.txt'), 'Harbour office', lib.harbour, 'Harbour cranes shared', 'harbour-dues', 'docs.invalid'],
    };
  }, 300_000);

  afterAll(async () => {
    if (!lib.d) return;
    expect(await lib.d.stop()).toBe(0);
    removeDir(lib.d.dataDir);
  });

  for (const role of ['ada', 'eddie', 'bob', 'nora'] as const) {
    it(`${role}: every page reached answers, is titled, headed and labelled, offers only what ${role} may open and shows nothing of others'`, async () => {
      const web = await loggedIn(lib.d, lib.users[role]);
      // The audit log is an admin's record of who did what to which document (docs/permissions.md): names are its content.
      const forbidden = (path: string) => (role === 'ada' && path.startsWith('/admin/audit') ? [] : lib.forbidden[role]);
      const c = await crawl(web, lib.d.url, role, forbidden);
      crawls.set(role, c);
      console.log(`${role}: ${c.visited.size} pages in ${Math.round(c.ms)} ms`);
      expect(c.problems, c.problems.join('\n')).toEqual([]);
      expect(c.visited.size, 'the crawl stopped at its bound: raise MAX_PAGES or narrow PER_PATH').toBeLessThan(MAX_PAGES);
    }, 60_000);
  }

  it('each crawl reached the pages its role is meant to reach (so that a crawl that went nowhere cannot pass)', () => {
    const { docs, harbour, papers, labelId, sourceId } = lib;
    const reached = (role: Role, paths: string[]) => expect(paths.filter((p) => !crawls.get(role)?.visited.has(p)), `${role} did not reach these`).toEqual([]);
    const views = ['harbour-tide-report.docx', 'harbour-berth-list.csv', 'harbour-pilot-notes.md', 'harbour-storm-message.eml', 'harbour-quay-page.html'].map((n) => `/documents/${docs[n]}/view`);
    reached('ada', [
      '/admin/users',
      '/admin/audit',
      `/projects/${harbour}/sharing`,
      `/projects/${papers}/settings`,
      `/projects/${harbour}/sources/${sourceId}/edit`,
      `/projects/${harbour}/labels/${labelId}/delete`,
      `/trash/${docs['harbour-trashed-minutes.txt']}/purge`,
      `/documents/${docs['ada-private-ledger.txt']}`,
      ...views,
      '/settings/keys',
    ]);
    reached('eddie', [`/projects/${harbour}/sources`, `/documents/${docs['harbour-crane-logbook.pdf']}/delete`, `/trash/${docs['harbour-trashed-minutes.txt']}/purge`, ...views]);
    reached('bob', [`/projects/${harbour}`, `/projects/${harbour}/labels`, `/documents/${docs['harbour-crane-logbook.pdf']}`, ...views, `/documents/${docs['bob-own-diary.txt']}`]);
    reached('nora', ['/documents', '/projects', `/documents/${docs['nora-recipe-notes.txt']}`, '/settings/keys']);
  });
});
