/**
 * docs/configuration.md: "The operator commands … read the same `--data-dir`, `--database`, environment and config
 * file as `serve`", in the same order (flag > DOCSEARCH_* > config file), and a bad value there is a usage error
 * (exit 2) naming the option and where it came from — through the real commands.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeDir, runCli } from '../helpers/daemon.js';

const dir = mkdtempSync(join(tmpdir(), 'docsearch-operator-config-'));
afterAll(() => removeDir(dir));

describe('operator commands and the configuration', () => {
  it('take the data directory from the config file (DOCSEARCH_CONFIG or the default one), under DOCSEARCH_DATA_DIR, under --data-dir', async () => {
    const library = join(dir, 'library');
    const file = join(dir, 'explicit.json');
    writeFileSync(file, JSON.stringify({ 'data-dir': library }));
    const xdg = join(dir, 'xdg');
    mkdirSync(join(xdg, 'docsearch'), { recursive: true });
    writeFileSync(join(xdg, 'docsearch', 'config.json'), JSON.stringify({ 'data-dir': library }));
    const none = { XDG_CONFIG_HOME: join(dir, 'no-config'), XDG_DATA_HOME: join(dir, 'no-data') };

    const made = await runCli(['users', 'add', 'op@example.com', '--init'], { input: 'a long operator password\n', env: { ...none, DOCSEARCH_CONFIG: file } });
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toContain(`in ${library}`);

    const other = join(dir, 'elsewhere');
    const [fromDefaultFile, envBeatsFile, flagBeatsEnv] = await Promise.all([
      runCli(['users', 'list', '--json'], { env: { ...none, XDG_CONFIG_HOME: xdg } }),
      runCli(['users', 'list', '--json'], { env: { ...none, XDG_CONFIG_HOME: xdg, DOCSEARCH_DATA_DIR: other } }),
      runCli(['users', 'list', '--json', '--data-dir', library], { env: { ...none, DOCSEARCH_CONFIG: file, DOCSEARCH_DATA_DIR: other } }),
    ]);
    expect(fromDefaultFile.code, fromDefaultFile.stderr).toBe(0);
    expect(JSON.parse(fromDefaultFile.stdout).users.map((u: { email: string }) => u.email)).toEqual(['op@example.com']);
    expect(envBeatsFile.code).toBe(1);
    expect(envBeatsFile.stderr).toContain(`no library at ${other}`);
    expect(flagBeatsEnv.code, flagBeatsEnv.stderr).toBe(0);
    expect(JSON.parse(flagBeatsEnv.stdout).users).toHaveLength(1);
  });

  it('stop at a bad value in the config file with exit 2, naming the option and the file as its source', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ 'data-dir': join(dir, 'library'), embedder: 'bert' }));
    const res = await runCli(['users', 'list'], { env: { XDG_CONFIG_HOME: join(dir, 'no-config'), DOCSEARCH_CONFIG: file } });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('error: option "embedder" (from config file): must be builtin, builtin:fp32, builtin:int8, ollama:<model> or openai:<model> (got "bert")');
  });

  it('reindex stops at a malformed model option (flag or environment) with exit 2, naming it, and opens nothing', async () => {
    // docs/models.md: the operator commands, reindex among them, check --embedder and --openai-base-url as serve does.
    const env = { XDG_CONFIG_HOME: join(dir, 'no-config') };
    const library = join(dir, 'reindexed');
    const [flag, fromEnv] = await Promise.all([
      runCli(['reindex', '--data-dir', library, '--embedder', 'bert'], { env }),
      runCli(['reindex', '--data-dir', library, '--embedder', 'openai:text-embedding-3-small'], { env: { ...env, DOCSEARCH_OPENAI_BASE_URL: 'api.example.com/v1' } }),
    ]);
    expect([flag.code, fromEnv.code]).toEqual([2, 2]);
    expect(flag.stderr).toContain('error: option "embedder" (from --embedder): must be builtin, builtin:fp32, builtin:int8, ollama:<model> or openai:<model> (got "bert")');
    expect(fromEnv.stderr).toContain('error: option "openai-base-url" (from DOCSEARCH_OPENAI_BASE_URL): must be an http(s) URL (got "api.example.com/v1")');
    expect(existsSync(library)).toBe(false);
  });
});
