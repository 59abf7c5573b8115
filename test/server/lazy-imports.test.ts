/**
 * What a server that does not use them never loads: the libraries of optional features come in on first use
 * (OpenID Connect, the IMAP and WebDAV source kinds, passkeys, the terminal prompts), so a plain start keeps their
 * memory and time (openid-client alone: ~8.6 MiB resident, ~27 ms). The daemon runs with a module hook that records
 * every package it imports by name.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { addUser, api, REPO, removeDir, startDaemon } from '../helpers/daemon.js';

describe('lazy imports', () => {
  it('a daemon without SSO, sources or passkeys in use loads none of their libraries', { timeout: 180_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'docsearch-imports-'));
    const file = join(dataDir, 'imports.txt');
    const hook = pathToFileURL(join(REPO, 'test/helpers/record-imports.mjs')).href;
    const d = await startDaemon({ dataDir, env: { NODE_OPTIONS: `--import ${hook}`, DOCSEARCH_TEST_IMPORTS_FILE: file } });
    try {
      const user = await addUser(d);
      expect((await api(d, '/api/v1/search', { token: user.apiKey, body: { query: 'anything' } })).status).toBe(200);
      expect((await fetch(`${d.url}/login`)).status).toBe(200);
      const imported = new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean));
      // The hook saw the server's own imports…
      expect(imported).toContain('koa');
      // …and none of these.
      for (const lazy of ['openid-client', 'imapflow', 'webdav', '@simplewebauthn/server', '@inquirer/prompts']) expect(imported, lazy).not.toContain(lazy);
    } finally {
      expect(await d.stop()).toBe(0);
      removeDir(dataDir);
    }
  });
});
