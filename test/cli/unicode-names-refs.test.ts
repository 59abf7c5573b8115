/**
 * A document named in the other Unicode spelling (docs/api.md#names) by the clients that pick one out of a list the
 * server sent: MCP's get_document by path or file name, `docsearch trash restore|purge` by path; and a label both
 * added and removed in one `documents label`. A folder uploaded from a Mac keeps its paths decomposed (NFD) as sent; a
 * name typed on another keyboard comes composed (NFC).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/daemon.js';
import { call, httpClient } from '../mcp/mcp-client.js';
import { type CliSuite, cliSuite } from './cli-env.js';

const NFC = (s: string) => s.normalize('NFC');
const NFD = (s: string) => s.normalize('NFD');

describe('documents named in NFC and NFD by MCP and the trash', () => {
  let s: CliSuite;
  cliSuite((suite) => (s = suite), { setupTimeoutMs: 60_000 });

  it('get_document by path or file name, a label added and removed, trash restore and purge by path, in the other spelling', { timeout: 200_000 }, async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'docsearch-unicode-refs-')), 'mac');
    mkdirSync(join(dir, NFD('Übersicht')), { recursive: true });
    writeFileSync(join(dir, NFD('Übersicht'), NFD('Café.txt')), 'Opening hours of the café: eight to six.\n');
    const up = await runCli(['upload', dir, '--recursive', '--project', 'refs', '--create-project', '--wait'], { env: s.env, timeoutMs: 150_000 });
    expect(up.code, up.stderr).toBe(0);
    const listed = await runCli(['documents', 'list', '--project', 'refs', '--json'], { env: s.env });
    const [doc] = JSON.parse(listed.stdout).documents as { id: string; path: string; filename: string }[];
    expect(doc!.path).toBe(NFD('mac/Übersicht/Café.txt'));

    const mcp = await httpClient(s.d, s.user.apiKey);
    try {
      expect((await call(mcp, 'get_document', { path: NFC('mac/Übersicht/Café.txt') })).document.id).toBe(doc!.id);
      expect((await call(mcp, 'get_document', { filename: NFD('café.TXT') })).document.id).toBe(doc!.id);
    } finally {
      await mcp.close();
    }

    // One label named twice, in two spellings, to add and to remove: refused before anything is sent.
    const both = await runCli(['documents', 'label', doc!.id, 'add', NFC('Entwürfe'), 'remove', NFD('ENTWüRFE')], { env: s.env });
    expect(both.code, both.stderr).toBe(2);
    expect(both.stderr).toContain(`label "${NFC('Entwürfe')}" is both added and removed`);

    const deleted = await runCli(['documents', 'delete', doc!.id, '--yes'], { env: s.env });
    expect(deleted.code, deleted.stderr).toBe(0);
    const restored = await runCli(['trash', 'restore', NFC('mac/Übersicht/Café.txt')], { env: s.env });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toContain(`(${doc!.id}): searchable again`);
    expect((await runCli(['documents', 'delete', doc!.id, '--yes'], { env: s.env })).code).toBe(0);
    const purged = await runCli(['trash', 'purge', NFC('mac/Übersicht/Café.txt'), '--yes'], { env: s.env });
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stderr).toContain(`(${doc!.id}) for good`);
  });
});
