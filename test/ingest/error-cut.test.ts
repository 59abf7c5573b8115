/**
 * A library's or tool's error text, quoted in a document's error, is cut to a length between characters: a cut
 * between an emoji's two UTF-16 halves stored a lone surrogate, which the store turns into U+FFFD.
 */
import { describe, expect, it } from 'vitest';
import { parse as parseDocx } from '../../src/ingest/parsers/docx.js';
import { runTool, toolFailure } from '../../src/ingest/run-tool.js';
import { makeZip } from './build-fixtures.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

async function parseError(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('no error');
}

describe('error texts cut between characters', () => {
  it('a zip part name quoted by the zip reader, with an emoji at the cut', async () => {
    // yauzl refuses "absolute path: /aaa…": the emoji's halves fall on the 120th and 121st UTF-16 units.
    const name = `/${'a'.repeat(103)}🚢${'b'.repeat(20)}`;
    const message = await parseError(() => parseDocx(makeZip({ '[Content_Types].xml': '<Types/>', 'word/document.xml': '<w:document/>', [name]: 'x' })));
    expect(message).toContain('damaged or truncated (absolute path: /aaa');
    expect(message).not.toMatch(LONE_SURROGATE);
    expect(message).toContain('🚢');
  });

  it("a tool's last words on stderr, with an emoji at the cut", async () => {
    const said = `${'e'.repeat(199)}🚢${'f'.repeat(20)}`;
    const res = await runTool('/bin/sh', ['-c', 'printf "%s\\n" "$0" >&2; exit 3', said], { timeoutMs: 10_000 });
    const failure = toolFailure(res);
    expect(failure).toMatch(/^ \(exit status 3\): e{199}/);
    expect(failure).not.toMatch(LONE_SURROGATE);
  });
});
