/**
 * More refused forms that come back with what was typed, saying why (test/web/refused-forms-keep-input.test.ts has
 * sharing, transfer and a group's Add a person): Admin → Users' invitation form (an address with an account, one
 * that is not an address — it came back empty, the role and group reset, after a redirect), the Documents page's bulk
 * labels (a label too long: the selection and the labels typed were lost), and a passkey's Rename (the name typed was
 * replaced by the old one, its field folded away).
 */
import { describe, expect, it } from 'vitest';
import { addUser, api, type Daemon, type TestUser } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { freePort } from '../helpers/ports.js';
import { registrationResponse } from '../helpers/soft-passkey.js';
import { daemonForSuite } from '../helpers/suite-daemon.js';
import { loggedIn, type WebClient } from '../server/web-client.js';

/** Passkeys are offered on a host name only: the daemon's public URL is localhost, on a port chosen here. */
const PORT = await freePort();
const PUBLIC_URL = `http://localhost:${PORT}`;

const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
const alert = (page: string) => decode(/<p class="error" role="alert">([^<]*)<\/p>/.exec(page)?.[1] ?? '');
const inviteForm = (page: string) => /<form method="post" action="\/admin\/users\/invite"[\s\S]*?<\/form>/.exec(page)![0];
/** The addresses of the open invitations listed on Admin → Users. */
const invited = (page: string) => [...page.matchAll(/<tr data-invite-id="[^"]+">\s*<td>([^<]*)<\/td>/g)].map((m) => decode(m[1]!));
const textarea = (form: string) => decode(/<textarea name="email"[^>]*>([^<]*)<\/textarea>/.exec(form)![1]!);

describe('more refused forms keep what was typed', () => {
  let d: Daemon;
  let admin: TestUser;
  let bob: TestUser;
  daemonForSuite(
    async (started) => {
      d = started;
      admin = await addUser(d); // the first account: the admin
      bob = await addUser(d);
    },
    { args: ['--port', String(PORT), '--public-url', PUBLIC_URL] },
  );

  it("Admin → Users' invitation: the addresses not invited, the role and the group, and why", async () => {
    const web = await loggedIn(d, admin);
    await web.get('/admin/groups');
    await web.submit('/admin/groups', { _csrf: web.csrf, name: 'surveyors', description: '' });
    const group = /<option value="(grp_\w+)">surveyors<\/option>/.exec((await web.get('/admin/users')).text)![1]!;

    // One address, with an account already: nothing invited, the form as sent.
    const taken = await web.submit('/admin/users/invite', { _csrf: web.csrf, email: bob.email, role: 'admin', group });
    expect(taken.status).toBe(400);
    expect(alert(taken.text)).toBe(`An account with the e-mail ${bob.email} exists already.`);
    const form = inviteForm(taken.text);
    expect(textarea(form)).toBe(bob.email);
    expect(form).toContain('<option value="admin" selected>admin</option>');
    expect(form).toContain(`<option value="${group}" selected>surveyors</option>`);
    expect(invited((await web.get('/admin/users')).text)).toEqual([]);

    // Several: the good one is invited (its link shown, once), the others stay in the field to correct.
    const mixed = await web.submit('/admin/users/invite', { _csrf: web.csrf, email: `kay@example.com\nnot an address, ${bob.email}`, role: 'member', group: '' });
    expect(mixed.status).toBe(200);
    expect(alert(mixed.text)).toBe(`Not invited: not an address: "not an address" is not an e-mail address; ${bob.email}: an account with the e-mail ${bob.email} exists already.`);
    expect(mixed.text).toMatch(/id="invite-link" readonly value="http:\/\/localhost:\d+\/invite\?token=[\w-]+"/);
    expect(mixed.text).toContain('Invitation link for kay@example.com');
    const again = inviteForm(mixed.text);
    expect(textarea(again)).toBe(`not an address\n${bob.email}`);
    expect(again).toContain('<option value="member" selected>member</option>');
    expect(again).toContain('<option value="" selected>none</option>');
    // Kay's invitation was made once, not kept in the field to be made again.
    expect(invited((await web.get('/admin/users')).text)).toEqual(['kay@example.com']);
  });

  it("a passkey's Rename: its field open with the name typed, and why", async () => {
    const web = await loggedIn(d, bob);
    const id = await addPasskey(web, 'Laptop');
    const typed = 'Work\u202elaptop';
    const renamed = await web.submit(`/settings/security/passkeys/${id}/rename`, { _csrf: web.csrf, name: typed });
    expect(renamed.status).toBe(400);
    expect(alert(renamed.text)).toMatch(/^The name /);
    const rename = new RegExp(`<details class="rename"[^>]*>(?:(?!</details>)[\\s\\S])*?/settings/security/passkeys/${id}/rename[\\s\\S]*?</details>`).exec(renamed.text)![0];
    expect(rename).toMatch(/^<details class="rename" open>/);
    expect(decode(/name="name" maxlength="\d+" required value="([^"]*)"/.exec(rename)![1]!)).toBe(typed);
    // Nothing changed.
    expect((await web.get('/settings/security')).text).toContain(`value="Laptop"`);
  });

  it("the Documents page's bulk labels: the list again, its filter, the documents still selected and the labels typed", async () => {
    const ann = await addUser(d);
    const up = await uploadFiles(d, ann.apiKey, [
      { name: 'tide tables.txt', bytes: Buffer.from('High water at the harbour mouth comes an hour after the moon.\n') },
      { name: 'tide notes.txt', bytes: Buffer.from('Spring tides run strongest two days after the new moon.\n') },
    ]);
    expect(up.status, JSON.stringify(up.body)).toBe(202);
    const [first, second] = (up.body.documents as { id: string }[]).map((x) => x.id);
    const web = await loggedIn(d, ann);
    const list = '/documents?filename=tide';
    await web.get(list);
    const long = 'Gezeitentafeln der Hafeneinfahrt für das ganze Jahr zweitausendsechsundzwanzig und danach';
    const typed = `harbour, ${long}`;
    const refused = await web.submit('/documents/bulk', { _csrf: web.csrf, action: 'label', ids: [first!], labels: typed, return_to: list });
    expect(refused.status).toBe(400);
    expect(alert(refused.text)).toBe(`The label “${long}” must be at most 64 characters.`);
    const bulk = /<form method="post" action="\/documents\/bulk"[\s\S]*?<\/form>/.exec(refused.text)![0];
    expect(decode(/<input type="text" name="labels" maxlength="\d+" placeholder="unpaid, urgent" value="([^"]*)">/.exec(bulk)![1]!)).toBe(typed);
    const pick = (id: string) => new RegExp(`<input type="checkbox" name="ids" value="${id}"[^>]*>`).exec(bulk)![0];
    expect(pick(first!)).toMatch(/ checked>$/);
    expect(pick(second!)).not.toContain('checked');
    // The same list: its filter kept, and the form comes back to it.
    expect(refused.text).toContain('<input type="hidden" name="return_to" value="/documents?filename=tide">');
    expect(((await api(d, `/api/v1/documents/${first}`, { token: ann.apiKey })).body as { labels: string[] }).labels).toEqual([]);
  });

  /** A page script's JSON post (the passkey forms), with the client's cookies and CSRF token. */
  const postJson = async (web: WebClient, path: string, body: unknown) => {
    const cookie = [...web.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(d.url + path, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': web.csrf, cookie }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  /** A passkey of a software authenticator (test/helpers/soft-passkey.ts) added on Settings → Security; its id. */
  async function addPasskey(web: WebClient, name: string): Promise<string> {
    await web.get('/settings/security');
    const options = await postJson(web, '/settings/security/passkeys/options', {});
    expect(options.status).toBe(200);
    expect((await postJson(web, '/settings/security/passkeys', { response: registrationResponse(options.body as never, PUBLIC_URL), name, alone: false })).status).toBe(200);
    const page = await web.get('/settings/security');
    return [...page.text.matchAll(/\/settings\/security\/passkeys\/([^/"]+)\/rename/g)].at(-1)![1]!;
  }
});
