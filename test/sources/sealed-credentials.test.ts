/**
 * A source's credentials under the secrets key (docs/sources.md "Credentials"), through the built daemon on one data
 * directory: shown back only by name, never logged, bound to their source (copied to another, they do not open); a
 * source's sealed credentials alone make a daemon with another key refuse to start, saying so; once the key is reset
 * (`docsearch users reset-2fa --all`), the source says which to enter again — `secrets_to_reenter`, `enter again` in
 * `sources show`, **Enter again** on the Sources tab — and `sources edit --secret` enters it. The sources are S3
 * buckets nothing answers for: no server is needed.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv } from '../cli/cli-env.js';
import { addUser, type Daemon, removeDir, runCli, startDaemon } from '../helpers/daemon.js';
import { withLibraryDb } from '../helpers/library-db.js';
import { SourceClient } from '../helpers/sources.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { loggedIn } from '../server/web-client.js';

const MINUTE = 60_000;
const SECRET = 'sealed-secret-value-0123456789abcdefghij';

describe("a source's sealed credentials and the secrets key", () => {
  const dirs = tempDirs('docsearch-sealed-credentials');
  const daemons: Daemon[] = [];
  afterAll(async () => {
    for (const d of daemons) await d.stop();
    if (daemons[0]) removeDir(daemons[0].dataDir);
    dirs.removeAll();
  });

  it('are named, never shown or logged, bound to their source; refuse another key; once the key is reset, are asked for again and entered', async () => {
    const keys = dirs.make('keys');
    const keyFile = (name: string) => {
      const path = join(keys, name);
      writeFileSync(path, randomBytes(32).toString('hex'), { mode: 0o600 });
      return path;
    };
    const [first, second] = [keyFile('first.key'), keyFile('second.key')];
    const args = (key: string) => ['--sources-allow-private', '--sources-min-interval', '1', '--secrets-key-file', key];
    const d = await startDaemon({ args: args(first) });
    daemons.push(d);
    const user = await addUser(d);
    let client = new SourceClient(d, user.apiKey);
    const project = await client.project('sealed');
    // Port 9 on loopback: nothing answers, so each pass fails, and logs what it tried.
    const added = await client.add(project, { url: 's3://sealed-bucket/', every: '1h', options: { endpoint: 'http://127.0.0.1:9', access_key_id: 'SEALEDKEYID000000001', secret_access_key: SECRET } });
    expect(added).toMatchObject({ secrets: ['secret_access_key'], secrets_to_reenter: [] });
    expect(JSON.stringify(added)).not.toContain(SECRET);
    expect((await client.passAfter(project, added.id, 0)).status).toBe('error');
    await d.logLine('source.failed');
    // Bound to their source: copied onto another source's row, they do not open there.
    const other = await client.add(project, { url: 's3://other-bucket/', every: '1h', options: { endpoint: 'http://127.0.0.1:9', access_key_id: 'OTHERKEYID0000000001', secret_access_key: 'another-secret-0000000000000000000000000' } });
    withLibraryDb(d.dataDir, (db) => db.prepare('update sources set secrets = (select secrets from sources where id = ?) where id = ?').run(added.id, other.id));
    expect((await client.get(project, other.id)).secrets_to_reenter).toEqual(['secret_access_key']);
    expect((await client.get(project, added.id)).secrets_to_reenter).toEqual([]);
    expect(await d.stop()).toBe(0);
    expect(d.stdout() + d.stderr()).not.toContain(SECRET);

    // Only the source's credentials are sealed (no authenticator app, no mail): another key is refused, saying so.
    const refused = await startDaemon({ dataDir: d.dataDir, args: args(second) }).then(
      async (started) => `started (exit ${await started.stop()})`,
      (err: Error) => err.message,
    );
    expect(refused).toMatch(/^daemon exited with [1-9]\d* before listening/);
    expect(refused).toContain("this library seals authenticator-app secrets, sources' credentials and unsent mail with another secrets key");

    // The first key lost: reset, then the second key is the library's, and the source asks for its secret again.
    const reset = await runCli(['users', 'reset-2fa', '--all', '--yes', '--data-dir', d.dataDir], { env: d.env });
    expect(reset.code, reset.stderr).toBe(0);
    const again = await startDaemon({ dataDir: d.dataDir, args: args(second) });
    daemons.push(again);
    client = new SourceClient(again, user.apiKey);
    expect((await client.get(project, added.id)).secrets_to_reenter).toEqual(['secret_access_key']);
    const env = cliEnv(again, { DOCSEARCH_TOKEN: user.apiKey });
    const shown = await runCli(['sources', 'show', added.id], { env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`enter again\\s+secret_access_key: docsearch sources edit ${added.id} --secret secret_access_key`));
    const tab = await (await loggedIn(again, user)).get(`/projects/${project}/sources`);
    expect(tab.text).toContain('Enter again: secret_access_key');
    expect(tab.text).toContain(`href="/projects/${project}/sources/${added.id}/edit"`);

    const entered = await runCli(['sources', 'edit', added.id, '--secret', 'secret_access_key'], { env, input: `${SECRET}\n` });
    expect(entered.code, entered.stderr).toBe(0);
    expect(await client.get(project, added.id)).toMatchObject({ secrets: ['secret_access_key'], secrets_to_reenter: [] });
  }, 4 * MINUTE);
});
