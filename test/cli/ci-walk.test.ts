import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, type Daemon, REPO, runCli, type TestUser } from '../helpers/daemon.js';
import { makePdf } from '../ingest/pipeline/fixtures.js';
import { cliEnv, cliSuite } from './cli-env.js';

/** Bytes that claim to be a PDF and are not: the server accepts the upload and the document fails. */
const BROKEN_PDF = '%PDF-1.7\nthis is not really a PDF at all\n%%EOF\n';

/** action.yml: its inputs, and the env of its one step (`INPUT_X: ${{ inputs.x }}`). */
function actionStep(): { inputs: string[]; env: Map<string, string>; run: string } {
  const yml = readFileSync(join(REPO, 'action.yml'), 'utf8');
  const inputsBlock = /^inputs:\n([\s\S]*?)^\S/m.exec(yml)![1]!;
  const inputs = [...inputsBlock.matchAll(/^ {2}([a-z-]+):$/gm)].map((m) => m[1]!);
  const env = new Map([...yml.matchAll(/^ {8}(INPUT_[A-Z_]+): \$\{\{ inputs\.([a-z-]+) \}\}$/gm)].map((m) => [m[1]!, m[2]!] as [string, string]));
  const run = /^ {6}run: (.+)$/m.exec(yml)![1]!;
  return { inputs, env, run };
}

interface StepResult {
  code: number | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
}

describe('a CI walk: CI=true, no TTY, --with-token, the GitHub Action (issue 21)', () => {
  let d: Daemon;
  let user: TestUser;
  cliSuite((s) => ({ d, user } = s));

  /** Runs action.yml's step the way a runner does: its `run` line in bash, inputs as INPUT_*, no terminal, CI=true. */
  async function runAction(workspace: string, inputs: Record<string, string>): Promise<StepResult> {
    const { env: mapping, run } = actionStep();
    const bin = mkdtempSync(join(tmpdir(), 'docsearch-path-'));
    symlinkSync(BIN, join(bin, 'docsearch'));
    const outputFile = join(bin, 'output');
    const summaryFile = join(bin, 'summary');
    writeFileSync(outputFile, '');
    writeFileSync(summaryFile, '');
    const env: Record<string, string> = {
      ...cliEnv(null),
      PATH: `${bin}:${process.env.PATH}`,
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: workspace,
      GITHUB_ACTION_PATH: REPO,
      GITHUB_OUTPUT: outputFile,
      GITHUB_STEP_SUMMARY: summaryFile,
      RUNNER_TEMP: bin,
    };
    // Every input gets its INPUT_* variable, empty when the workflow leaves it out (Actions passes the default).
    for (const [name, input] of mapping) env[name] = inputs[input] ?? '';
    const proc = spawn('bash', ['-c', run], { cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const code = await new Promise<number | null>((r) => proc.once('exit', r));
    const outputs = Object.fromEntries(readFileSync(outputFile, 'utf8').split('\n').filter(Boolean).map((l) => l.split('=') as [string, string]));
    return { code, stdout, stderr, outputs, summary: readFileSync(summaryFile, 'utf8') };
  }

  it('action.yml maps every input to the INPUT_* variable its script reads', () => {
    const { inputs, env } = actionStep();
    expect([...env.values()].sort()).toEqual([...inputs].sort());
    const script = readFileSync(join(REPO, 'scripts/action-sync.sh'), 'utf8');
    for (const name of env.keys()) expect(script, name).toContain(`\${${name}`);
  });

  it('login without a terminal fails at once and points to --with-token (no 10-minute wait); --with-token works', { timeout: 90_000 }, async () => {
    const env = cliEnv(null, { CI: 'true' });
    // Waiting for a browser would hold it for 10 minutes: runCli kills it at 50 s (code null), failing the test.
    const res = await runCli(['login', '--server', d.url], { env, timeoutMs: 50_000 });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(
      `error: not on a terminal (CI is set), so there is no browser to log in to ${d.url} with\n` +
        'hint: pipe an API key instead: echo "$DOCSEARCH_KEY" | docsearch login --with-token (or set DOCSEARCH_TOKEN); --no-browser prints a URL to open elsewhere\n',
    );
    const login = await runCli(['login', '--server', d.url, '--with-token'], { env, input: `${user.apiKey}\n` });
    expect(login.code, login.stderr).toBe(0);
    expect((await runCli(['projects', '--json', 'name'], { env })).code).toBe(0);
  });

  it('a sync\'s summary counts each file once: a file that failed is not also added', { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docsearch-once-'));
    writeFileSync(join(dir, 'a.txt'), 'The ferry leaves pier one at nine.\n');
    writeFileSync(join(dir, 'b.txt'), 'The ferry leaves pier two at ten.\n');
    writeFileSync(join(dir, 'broken.pdf'), BROKEN_PDF);
    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey, CI: 'true' });
    const res = await runCli(['upload', dir, '--sync', '--project', 'counted-once', '--create-project', '--wait'], { env, timeoutMs: 240_000 });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('done: 2 added, 0 replaced, 0 deleted, 0 unchanged, 1 failed\n');
  });

  it('sync with an ignore file, --dry-run, a failed file that fails every run until fixed or removed, and the delete guard', { timeout: 600_000 }, async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'docsearch-repo-'));
    const docs = join(workspace, 'docs');
    mkdirSync(join(docs, 'drafts'), { recursive: true });
    mkdirSync(join(workspace, 'docs/node_modules/x'), { recursive: true });
    for (let i = 1; i <= 6; i++) writeFileSync(join(docs, `page${i}.txt`), `Handbook page ${i}: the ferry timetable for pier number ${i}.\n`);
    writeFileSync(join(docs, 'drafts/secret.txt'), 'An unpublished draft about the ferry strike.\n');
    writeFileSync(join(docs, 'node_modules/x/readme.txt'), 'A dependency.\n');
    writeFileSync(join(docs, 'manual.pdf'), BROKEN_PDF);
    writeFileSync(join(docs, '.docsearchignore'), 'drafts/\n');
    const inputs = { server: d.url, token: user.apiKey, project: 'handbook', 'create-project': 'true' };

    // A dry run first: the plan, nothing changed (the project is not even created).
    const dry = await runAction(workspace, { ...inputs, 'dry-run': 'true' });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.outputs).toEqual({ new: '7', changed: '0', unchanged: '0', deleted: '0', failed: '0', ignored: '3' });
    expect(dry.summary).toContain('### docsearch sync of `docs` (dry run)');
    expect(dry.stdout).toContain('docsearch sync: 7 new, 0 changed, 0 unchanged, 0 deleted, 0 failed, 3 ignored (dry run: nothing changed)');
    const env = cliEnv(d, { DOCSEARCH_TOKEN: user.apiKey, CI: 'true' });
    expect((await runCli(['projects', 'show', 'handbook'], { env })).code).toBe(1);

    // The real run: the broken PDF fails, the step fails, the file is annotated; drafts/ and node_modules/ stay out.
    const first = await runAction(workspace, inputs);
    expect(first.code).toBe(1);
    expect(first.outputs).toEqual({ new: '7', changed: '0', unchanged: '0', deleted: '0', failed: '1', ignored: '3' });
    expect(first.stdout).toMatch(/^::error file=docs\/manual\.pdf,title=docsearch: file failed::.+$/m);
    // The key appears only in the command that tells the runner to mask it in the log.
    expect(first.stdout.split('\n').filter((l) => l.includes(user.apiKey))).toEqual([`::add-mask::${user.apiKey}`]);
    expect(first.stderr).not.toContain(user.apiKey);
    expect(first.stderr).toContain('error: 1 of 7 files failed:\n  docs/manual.pdf: ');

    // Re-running the unchanged folder sends nothing and still fails, with the summary line (plain CLI, no --json).
    const again = await runCli(['upload', docs, '--sync', '--prune', '--project', 'handbook', '--wait'], { env, timeoutMs: 240_000 });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('sync: 0 new, 0 changed, 7 unchanged, 0 to delete, 3 ignored');
    expect(again.stderr).toContain('done: 0 added, 0 replaced, 0 deleted, 6 unchanged, 1 failed\n');
    expect(again.stderr).toContain(`${docs}/manual.pdf: `);
    const rerun = await runAction(workspace, inputs);
    expect(rerun.code).toBe(1);
    expect(rerun.outputs.failed).toBe('1');

    // Fixed: a real PDF replaces the broken one, and the run is green.
    writeFileSync(join(docs, 'manual.pdf'), makePdf([['The ferry manual: boarding starts ten minutes before departure.']]));
    const fixed = await runAction(workspace, inputs);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.outputs).toMatchObject({ changed: '1', failed: '0' });

    // Broken again (the ready version stays beside the failed one), then removed from the folder: both pruned, and green.
    writeFileSync(join(docs, 'manual.pdf'), BROKEN_PDF.replace('really', 'at all'));
    expect((await runAction(workspace, inputs)).code).toBe(1);
    rmSync(join(docs, 'manual.pdf'));
    const removed = await runAction(workspace, inputs);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.outputs).toMatchObject({ failed: '0', deleted: '2' });

    // The delete guard: a checkout that lost most of the folder stops the step; nothing is deleted.
    for (let i = 1; i <= 4; i++) rmSync(join(docs, `page${i}.txt`));
    const guarded = await runAction(workspace, inputs);
    expect(guarded.code).toBe(2);
    expect(guarded.stderr).toContain('error: --prune would delete 4 of the 6 synced documents of project handbook, more than --max-delete 3: stopped, nothing was changed');
    expect(guarded.outputs).toEqual({});
    const list = await runCli(['documents', 'list', '--project', 'handbook', '--json', 'path'], { env });
    expect(JSON.parse(list.stdout).documents).toHaveLength(6);
    const forced = await runAction(workspace, { ...inputs, 'max-delete': '4' });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.outputs).toMatchObject({ deleted: '4', unchanged: '2' });
  });
});
