/**
 * An identity provider's names in either Unicode spelling (docs/api.md#names, docs/sso.md): a group claim sent
 * decomposed (NFD, "E" + U+0301) is the group named composed (NFC, "É") in --sso-required-group and --sso-admin-group
 * and the other way round, and makes no second group; an e-mail domain is one in its composed, decomposed and ASCII
 * (IDNA, xn--) forms for --sso-allowed-domains, which takes a decomposed domain as well. Through a real OpenID Provider
 * (oidc-provider) and the real daemon.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, removeDir, runCli } from '../../helpers/daemon.js';
import { startIdp, type TestIdp } from '../../helpers/oidc-provider.js';
import { WebClient } from '../../server/web-client.js';
import { PROVIDER_NAME, registerDaemons, ssoDaemon, ssoSignIn } from './sso-flow.js';

const NFC = (s: string) => s.normalize('NFC');
const NFD = (s: string) => s.normalize('NFD');

describe("the provider's group and e-mail domain names in NFC and NFD", () => {
  let idp: TestIdp;
  let d: Daemon;

  beforeAll(async () => {
    idp = await startIdp();
    // The required group typed composed; the admin group and a domain pasted decomposed (a Mac's file name); a domain
    // in its ASCII form (xn--), as DNS writes it.
    d = await ssoDaemon(idp, ['--sso-required-group', NFC('Équipe'), '--sso-admin-group', NFD('Sécurité'), '--sso-allowed-domains', `${NFD('café.example')}, xn--bcher-kva.example`]);
    registerDaemons(idp, [d]);
  }, 180_000);
  afterAll(async () => {
    if (d) {
      expect(await d.stop()).toBe(0);
      removeDir(d.dataDir);
    }
    await idp?.stop();
  });

  const op = (...args: string[]) => runCli([...args, '--data-dir', d.dataDir], { env: d.env });
  const person = (login: string, email: string, groups: string[]) => idp.accounts.set(login, { email, email_verified: true, groups });
  const signIn = async (login: string) => {
    const page = await ssoSignIn(new WebClient(d), idp, login);
    return { status: page.status, text: page.text };
  };

  it('a group claim in the other spelling meets the required and admin groups, and is the one group of its name', async () => {
    person('ana', `ana@${NFC('café.example')}`, [NFD('Équipe'), NFC('Sécurité')]);
    person('eli', `eli@${NFC('café.example')}`, [NFC('Équipe')]);
    expect(await signIn('ana')).toMatchObject({ status: 302 });
    expect(await signIn('eli')).toMatchObject({ status: 302 });
    const users = JSON.parse((await op('users', 'list', '--json')).stdout).users as { email: string; admin: boolean }[];
    expect(users.map((u) => [u.email, u.admin])).toEqual([
      [NFC('ana@café.example'), true],
      [NFC('eli@café.example'), false],
    ]);
    // One group of each name, stored composed, with both people in it whichever spelling their claim had.
    const groups = JSON.parse((await op('groups', 'list', '--json')).stdout).groups as { name: string; source: string | null }[];
    expect(groups.map((g) => [g.name, g.source]).sort()).toEqual([
      [NFC('Sécurité'), PROVIDER_NAME],
      [NFC('Équipe'), PROVIDER_NAME],
    ]);
    const members = JSON.parse((await op('groups', 'members', NFD('Équipe'), '--json')).stdout).members as { email: string }[];
    expect(members.map((m) => m.email).sort()).toEqual([NFC('ana@café.example'), NFC('eli@café.example')]);
    // Losing the group at the provider, in either spelling, still refuses the sign-in.
    person('eli', `eli@${NFC('café.example')}`, [NFD('Sécurité')]);
    expect((await signIn('eli')).text).toContain(`Only members of the group “${NFC('Équipe')}”`);
  });

  it('an address at an allowed domain gets an account in its composed, decomposed or ASCII (xn--) form; another domain does not', async () => {
    const group = [NFC('Équipe')];
    person('ben', 'ben@xn--caf-dma.example', group);
    person('cleo', `cleo@${NFD('bücher.example')}`, group);
    person('dov', `dov@${NFC('BÜCHER.example')}`, group);
    person('fay', 'fay@cafe.example', group);
    expect(await signIn('ben')).toMatchObject({ status: 302 });
    expect(await signIn('cleo')).toMatchObject({ status: 302 });
    expect(await signIn('dov')).toMatchObject({ status: 302 });
    const refused = await signIn('fay');
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Accounts here are for verified e-mail addresses at');
    const users = JSON.parse((await op('users', 'list', '--json')).stdout).users as { email: string }[];
    expect(users.map((u) => u.email)).toEqual(expect.arrayContaining(['ben@xn--caf-dma.example', NFC('cleo@bücher.example'), NFC('dov@BÜCHER.example')]));
    expect(users.map((u) => u.email)).not.toContain('fay@cafe.example');
  });
});
