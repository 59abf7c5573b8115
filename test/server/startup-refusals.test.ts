/**
 * README and docs/configuration.md: a bad option or setting exits 2, naming the option and where its value came from
 * (flag, environment, config file), before anything is opened; the systemd unit's RestartPreventExitStatus=2 3 keeps
 * such a daemon down instead of restarting it for ever. Each case runs the real `docsearch serve` with one value that
 * can never work (malformed, or naming a file, folder or language that is not there), and nothing may be made.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, removeDir, runCli, startDaemon } from '../helpers/daemon.js';
import { pooled } from '../helpers/pooled.js';
import { freePort } from '../helpers/ports.js';

const dir = mkdtempSync(join(tmpdir(), 'docsearch-startup-refusals-'));
afterAll(() => removeDir(dir));

const aFile = join(dir, 'a-file');
writeFileSync(aFile, 'not a folder\n');
const notAKey = join(dir, 'not-a-key');
writeFileSync(notAKey, 'hunter2\n');
const key = join(dir, 'key');
writeFileSync(key, `${'ab'.repeat(32)}\n`);
const onnxDir = join(dir, 'reranker');
mkdirSync(onnxDir);
writeFileSync(join(onnxDir, 'tokenizer.json'), '{}');
const badHost = join(dir, 'bad-host.json');
writeFileSync(badHost, JSON.stringify({ host: '127.0.0.1:7411' }));
const noTools = join(dir, 'empty-path');
mkdirSync(noTools);

/** [args, env, the error line after `error: `] */
const cases: [string[], Record<string, string>, string][] = [
  [['--host', 'http://docs.example.com'], {}, 'option "host" (from --host): "http://docs.example.com" is not an IP address or host name (the port is --port)'],
  [[], { DOCSEARCH_CONFIG: badHost }, 'option "host" (from config file): "127.0.0.1:7411" is not an IP address or host name (the port is --port)'],
  [['--data-dir', join(aFile, 'library')], {}, `option "data-dir" (from --data-dir): ${aFile} is not a folder`],
  [['--model-cache-dir', aFile], {}, `option "model-cache-dir" (from --model-cache-dir): ${aFile} is not a folder`],
  [[], { DOCSEARCH_PUBLIC_URL: 'docs.example.com' }, 'option "public-url" (from DOCSEARCH_PUBLIC_URL): must be an http(s) URL (got "docs.example.com")'],
  [['--smtp-from', 'Docs <docs at example.com>'], {}, 'option "smtp-from" (from --smtp-from): "Docs <docs at example.com>" is not an address such as docs@example.com or "Docs <docs@example.com>"'],
  [['--reranker', `onnx:${onnxDir}`], {}, `option "reranker" (from --reranker): ${join(onnxDir, 'model.onnx')} is not there (onnx:<dir> needs model.onnx and tokenizer.json)`],
  [['--ocr-languages', 'eng+qqq'], {}, 'option "ocr-languages" (from --ocr-languages): no trained data for "qqq": install the npm package @tesseract.js-data/qqq'],
  [[], { DOCSEARCH_OCR_LANGUAGES: join(dir, 'no-tessdata') }, `option "ocr-languages" (from DOCSEARCH_OCR_LANGUAGES): ${join(dir, 'no-tessdata')} is not a folder`],
  [['--ocr', 'native'], { PATH: noTools }, 'option "ocr" (from --ocr): tesseract is not installed (Debian: tesseract-ocr)'],
  [['--secrets-key-file', join(dir, 'no-key')], {}, `option "secrets-key-file" (from --secrets-key-file): cannot read the secrets key ${join(dir, 'no-key')}: ENOENT`],
  [[], { DOCSEARCH_SECRETS_KEY_FILE: notAKey }, `option "secrets-key-file" (from DOCSEARCH_SECRETS_KEY_FILE): ${notAKey} does not hold a secrets key`],
  [['--secrets-key-file', key], { DOCSEARCH_SECRETS_KEY: 'cd'.repeat(32) }, '--secrets-key (from DOCSEARCH_SECRETS_KEY) and --secrets-key-file (from --secrets-key-file) both give the secrets key: give one'],
  [['--source-roots', `${dir},${aFile}`], {}, `option "source-roots" (from --source-roots): ${aFile} is not a folder`],
  [['--trusted-header-login', '--trust-proxy', '10.0.0.5', '--trusted-header-user', 'Remote User'], {}, 'option "trusted-header-user" (from --trusted-header-user): "Remote User" is not an HTTP header name'],
  [['--sso-allowed-domains', 'example.org, @example.com'], {}, 'option "sso-allowed-domains" (from --sso-allowed-domains): "@example.com" is not a domain such as example.com'],
  // Refused so before; kept here so that the table is the whole list.
  [['--port', '65536'], {}, 'option "port" (from --port) must be between 0 and 65535, got 65536'],
  [[], { DOCSEARCH_DATABASE_URL: 'mysql://db.example.com/docs' }, 'option "database" (from DOCSEARCH_DATABASE_URL): must be a postgres:// or postgresql:// URL'],
  [['--storage', 'ftp://files.example.com/docs'], {}, 'option "storage" (from --storage): unsupported storage "ftp://…"; expected s3://bucket/prefix'],
  [['--oidc-client-id', 'docsearch'], {}, '--oidc-client-id needs --oidc-issuer'],
  // A URL with user:password@ is refused, each option saying where its credential goes, if anywhere.
  [['--public-url', 'https://ops:pw@docs.example.com'], {}, 'option "public-url" (from --public-url): must not carry credentials: it is the address people and OAuth clients are sent to'],
  [['--ollama-host', 'http://ops:pw@127.0.0.1:11434'], {}, 'option "ollama-host" (from --ollama-host): must not carry credentials: docsearch sends Ollama none'],
  [[], { DOCSEARCH_OPENAI_BASE_URL: 'https://ops:pw@llm.example.com' }, 'option "openai-base-url" (from DOCSEARCH_OPENAI_BASE_URL): must not carry credentials: give the key with --openai-api-key (DOCSEARCH_OPENAI_API_KEY)'],
  [['--reranker', 'http:https://ops:pw@rerank.example.com/rerank'], {}, 'option "reranker" (from --reranker): must not carry credentials: give the key with --reranker-api-key (DOCSEARCH_RERANKER_API_KEY)'],
  [['--oidc-issuer', 'https://ops:pw@idp.example.com', '--oidc-client-id', 'docsearch'], {}, 'option "oidc-issuer" (from --oidc-issuer): must not carry credentials (the client secret is --oidc-client-secret)'],
];

describe('serve with a value that can never work', () => {
  it('exits 2 naming the option and its source, and makes nothing', { timeout: 60_000 }, async () => {
    const runs = await pooled(cases, 3, async ([args, env], i) => {
      const dataDir = join(dir, `library-${i}`);
      const cache = join(dir, `models-${i}`);
      const run = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--model-cache-dir', cache, ...args], {
        env: { XDG_CONFIG_HOME: join(dir, 'no-config'), XDG_DATA_HOME: join(dir, 'no-data'), ...env },
      });
      return { ...run, made: [dataDir, cache].filter((p) => existsSync(p)) };
    });
    runs.forEach((run, i) => {
      expect(run.code, `${cases[i]![0].join(' ')}\n${run.stderr}`).toBe(2);
      expect(run.stderr).toContain(`error: ${cases[i]![2]}`);
      expect(run.made).toEqual([]);
    });
    expect(readFileSync(aFile, 'utf8')).toBe('not a folder\n');
    expect(existsSync(join(dir, 'no-data'))).toBe(false);
  });

  it('accepts values of the same kinds that can work, and OCR languages while OCR is off', async () => {
    // An operator command reads the same configuration: past it, it stops at the library that is not there.
    const res = await runCli(['users', 'list', '--data-dir', join(dir, 'none')], {
      env: {
        XDG_CONFIG_HOME: join(dir, 'no-config'),
        DOCSEARCH_HOST: '::1',
        DOCSEARCH_PUBLIC_URL: 'https://docs.example.com/search/',
        DOCSEARCH_SMTP_FROM: 'Docs <docs@example.com>',
        DOCSEARCH_OCR: 'off',
        DOCSEARCH_OCR_LANGUAGES: 'qqq',
        DOCSEARCH_SECRETS_KEY_FILE: key,
        // A share not mounted yet: started at boot before it, the daemon would otherwise stop for good.
        DOCSEARCH_SOURCE_ROOTS: `${dir},${join(dir, 'share-mounted-later')}`,
        DOCSEARCH_TRUSTED_HEADER_USER: 'X-authentik-username',
        DOCSEARCH_SSO_ALLOWED_DOMAINS: 'example.org, bücher.example',
        DOCSEARCH_MODEL_CACHE_DIR: join(dir, 'models', 'not-yet'),
      },
    });
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`no library at ${join(dir, 'none')}`);
  });
});

describe('serve with a server that does not answer', () => {
  // docs/configuration.md: not a bad value. Exit 1, not 2: the systemd unit's RestartPreventExitStatus=2 3 would keep
  // the daemon down for good after a database or object store came up a little after it (a boot, an outage).
  it('a database or object store: exits 1, not 2, saying which (never its password)', async () => {
    const [dbPort, s3Port] = [await freePort(), await freePort()];
    const env = { XDG_CONFIG_HOME: join(dir, 'no-config') };
    const [database, storage] = await Promise.all([
      runCli(['serve', '--port', '0', '--data-dir', join(dir, 'away-db'), '--model-cache-dir', join(dir, 'models-away'), '--database', `postgres://ops:hunter2@127.0.0.1:${dbPort}/library`], { env }),
      runCli(['serve', '--port', '0', '--data-dir', join(dir, 'away-s3'), '--model-cache-dir', join(dir, 'models-away'), '--storage', 's3://library/docs'], {
        env: { ...env, AWS_ENDPOINT_URL: `http://127.0.0.1:${s3Port}`, AWS_ACCESS_KEY_ID: 'away', AWS_SECRET_ACCESS_KEY: 'away', AWS_REGION: 'us-east-1' },
      }),
    ]);
    expect(database.code, database.stderr).toBe(1);
    expect(database.stderr).toContain(`error: could not start: cannot open the PostgreSQL database postgres://ops:[redacted]@127.0.0.1:${dbPort}/library: connect ECONNREFUSED`);
    expect(database.stderr + database.stdout).not.toContain('hunter2');
    expect(storage.code, storage.stderr).toBe(1);
    expect(storage.stderr).toContain(`error: could not start: could not use the object store s3://library/docs at http://127.0.0.1:${s3Port}`);
  });

  it('a model or mail server: it starts all the same, its health degraded with the embedder down', async () => {
    const [ollamaPort, smtpPort] = [await freePort(), await freePort()];
    const d = await startDaemon({
      args: ['--embedder', 'ollama:nomic-embed-text', '--ollama-host', `http://127.0.0.1:${ollamaPort}`, '--smtp-url', `smtp://127.0.0.1:${smtpPort}`, '--smtp-from', 'docs@example.com', '--public-url', 'https://docs.example.com'],
    });
    try {
      await d.logLine('"msg":"embedder failed to load"');
      const health = await api(d, '/api/v1/health');
      expect(health.status).toBe(503);
      expect(health.body.status).toBe('degraded');
      expect(health.body.components.embedder).toMatchObject({ status: 'down', loaded: false, id: 'ollama:nomic-embed-text' });
      expect(health.body.components.mail).toMatchObject({ configured: true });
    } finally {
      expect(await d.stop()).toBe(0);
      removeDir(d.dataDir);
    }
  });
});
