/**
 * `docsearch saved-searches` through the built binary against a real daemon: `list` shows each saved search's name,
 * the project it is shared with (or "only you"), its author and query, `--json` with fields; `delete` and `rename`
 * find a name as `search --saved` does (the caller's own first, any case), refuse one shared by someone else before
 * changing anything, and `delete` asks (or wants --yes off a terminal); completion offers the names. A name as
 * written wins over one in another case ("ärger" is not "Ärger"), several of one's own in some case are refused, and an
 * id names one. And `search --saved NAME --json score` keeps the score field (the word after --json is fields once
 * --saved stands in for the query).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { addUser, api, runCli, type TestUser } from '../helpers/daemon.js';
import { uploadFiles } from '../ingest/pipeline/helpers.js';
import { type CliSuite, cliEnv, cliSuite } from './cli-env.js';

describe('docsearch saved-searches', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { timeoutMs: 60_000 });
  beforeAll(async () => {
    const up = await uploadFiles(s.d, s.user.apiKey, [{ name: 'otters.txt', bytes: Buffer.from('Otters sleep in the river holding hands.') }], { query: '?wait=true' });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
  }, 120_000);

  /** The names the API lists for a person, in its order. */
  const names = async (token: string) => ((await api(s.d, '/api/v1/saved-searches', { token })).body.saved_searches as { name: string }[]).map((v) => v.name);

  /** Ann (the suite's user) shares a project with Bob and a saved search with it; each keeps one of their own. */
  async function setUp(): Promise<{ bob: TestUser; bobEnv: Record<string, string> }> {
    const bob = await addUser(s.d);
    const bobEnv = cliEnv(s.d, { DOCSEARCH_TOKEN: bob.apiKey });
    const ann = (args: string[]) => runCli(args, { env: s.env });
    for (const args of [['projects', 'create', 'team'], ['projects', 'share', 'team', bob.email]]) {
      const r = await ann(args);
      expect(r.code, r.stderr).toBe(0);
    }
    for (const args of [
      ['search', 'otters', '--project', 'team', '--save', 'Team weekly', '--share', 'team'],
      ['search', 'river otters', '--save', 'weekly'],
    ]) {
      const r = await ann([...args, '--json']);
      expect(r.code, r.stderr).toBe(0);
    }
    const own = await runCli(['search', 'harbour', '--save', 'harbour', '--json'], { env: bobEnv });
    expect(own.code, own.stderr).toBe(0);
    return { bob, bobEnv };
  }

  it('lists, renames and deletes saved searches by name; another author\'s is refused', { timeout: 300_000 }, async () => {
    const { bob, bobEnv } = await setUp();
    const asBob = (args: string[]) => runCli(args, { env: bobEnv });

    // The list as a table through a pipe: tab-separated NAME, SHARED WITH, AUTHOR, QUERY.
    const listed = await asBob(['saved-searches']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.split('\n').filter(Boolean).sort()).toEqual([`Team weekly\tproject team\t${s.user.email}\totters`, `harbour\tonly you\t${bob.email}\tharbour`]);
    const json = await asBob(['saved-searches', 'list', '--json', 'name,mine']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).saved_searches.sort((a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name))).toEqual([
      { name: 'harbour', mine: true },
      { name: 'Team weekly', mine: false },
    ]);

    // Completion offers the names for delete and rename.
    const offered = await runCli(['__complete', 'saved-searches', 'delete', ''], { env: bobEnv });
    expect(offered.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0]).sort()).toEqual(['Team weekly', 'harbour']);

    // Ann's shared search is refused to Bob, with why, and with it the whole command: his own is kept too.
    const refused = await asBob(['saved-searches', 'delete', 'harbour', 'team WEEKLY', '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`error: "Team weekly" is ${s.user.email}'s saved search, shared with you: only its author may delete it\nhint: see whose each one is with \`docsearch saved-searches\`\n`);
    const renameRefused = await asBob(['saved-searches', 'rename', 'team weekly', 'mine now']);
    expect(renameRefused.code).toBe(1);
    expect(renameRefused.stderr).toContain('only its author may rename it');
    const typo = await asBob(['saved-searches', 'delete', 'harbour', 'harbor', '--yes']);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('no saved search named "harbor"');
    expect((await names(bob.apiKey)).sort()).toEqual(['Team weekly', 'harbour']);

    // Off a terminal, deleting wants --yes (a usage error) and deletes nothing.
    const unasked = await asBob(['saved-searches', 'delete', 'harbour']);
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toContain('add --yes to delete saved search "harbour"');

    // A name of Bob's own wins over a shared one of the same name (as --saved finds it).
    const same = await asBob(['search', 'otters', '--save', 'TEAM weekly', '--json']);
    expect(same.code, same.stderr).toBe(0);
    const deleted = await asBob(['saved-searches', 'delete', 'team weekly', 'Harbour', '--yes']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stderr).toBe('deleted saved search "TEAM weekly"\ndeleted saved search "harbour"\n');
    expect(await names(bob.apiKey)).toEqual(['Team weekly']);
    expect((await names(s.user.apiKey)).sort()).toEqual(['Team weekly', 'weekly']);

    // The author renames hers; Bob sees the new name; a name she has is the server's 409.
    const renamed = await runCli(['saved-searches', 'rename', 'team weekly', 'Team digest'], { env: s.env });
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(renamed.stderr).toBe('renamed saved search "Team weekly" to "Team digest"\n');
    expect(await names(bob.apiKey)).toEqual(['Team digest']);
    const taken = await runCli(['saved-searches', 'rename', 'team digest', 'WEEKLY'], { env: s.env });
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('you have a saved search named "WEEKLY"');

    const weekly = ((await api(s.d, '/api/v1/saved-searches', { token: s.user.apiKey })).body.saved_searches as { id: string; name: string }[]).find((v) => v.name === 'weekly')!;
    const json2 = await runCli(['saved-searches', 'delete', 'weekly', '--yes', '--json'], { env: s.env });
    expect(json2.code, json2.stderr).toBe(0);
    expect(JSON.parse(json2.stdout)).toEqual({ deleted: [weekly.id], failed: [] });
    expect(await names(s.user.apiKey)).toEqual(['Team digest']);
  });

  it('a name is found as written before in any case: "ärger" is not "Ärger" (the server keeps both), and an id names one', { timeout: 120_000 }, async () => {
    const save = async (name: string, query: string) => {
      const res = await api(s.d, '/api/v1/saved-searches', { token: s.user.apiKey, body: { name, search: { query } } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body as { id: string };
    };
    await save('Ärger', 'otters river');
    const lower = await save('ärger', 'otters hands');
    const ran = await runCli(['search', '--saved', 'ärger', '--json', 'score'], { env: s.env });
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout).query).toBe('otters hands');
    // Neither as written: several of hers in some case are named, not one picked behind her back.
    const tie = await runCli(['saved-searches', 'delete', 'ÄRGER', '--yes'], { env: s.env });
    expect(tie.code).toBe(1);
    expect(tie.stderr).toContain('2 of your saved searches are named "ÄRGER" in some case');
    expect(tie.stderr).toContain(lower.id);
    const mine = async () => (await names(s.user.apiKey)).filter((n) => n.endsWith('rger')).sort();
    expect(await mine()).toEqual(['Ärger', 'ärger'].sort());
    const deleted = await runCli(['saved-searches', 'delete', 'ärger', '--yes'], { env: s.env });
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(await mine()).toEqual(['Ärger']);
    const byId = await runCli(['saved-searches', 'rename', (await save('ärger', 'otters')).id, 'ärger 2'], { env: s.env });
    expect(byId.code, byId.stderr).toBe(0);
    expect(await mine()).toEqual(['Ärger']);
    expect(await names(s.user.apiKey)).toContain('ärger 2');
  });

  it('search --saved NAME --json score: the word after --json is the fields, not a query', { timeout: 120_000 }, async () => {
    const saved = await runCli(['search', 'otters holding hands', '--save', 'hands', '--json'], { env: s.env });
    expect(saved.code, saved.stderr).toBe(0);
    for (const args of [
      ['search', '--saved', 'hands', '--json', 'score'],
      ['search', '--json', 'score', '--saved', 'hands'],
    ]) {
      const res = await runCli(args, { env: s.env });
      expect(res.code, res.stderr).toBe(0);
      const body = JSON.parse(res.stdout);
      expect(body.query, args.join(' ')).toBe('otters holding hands');
      expect(body.results.length).toBeGreaterThan(0);
      for (const r of body.results) expect(Object.keys(r)).toEqual(['score']);
    }
    // Without --saved the word is still the query (the rule it keeps).
    const plain = await runCli(['search', '--json', 'score'], { env: s.env });
    expect(plain.code, plain.stderr).toBe(0);
    expect(JSON.parse(plain.stdout).query).toBe('score');
  });
});
