/**
 * docs/oauth.md, Resources: "Values are compared as parsed URLs (host case, default port)" — a client that writes the
 * host in capitals or spells out the default port names the same resource; the path is not folded (RFC 3986 §6.2.2).
 * The rule is a pure function of the request's value and the public URL, held here directly.
 */
import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../../src/auth/oauth/errors.js';
import { resolveResource } from '../../../src/auth/oauth/resource.js';

const PUBLIC = 'https://docs.example.com';

describe('resource names', () => {
  it('reads host case and the default port as the same resource', () => {
    for (const mcp of [`${PUBLIC}/mcp`, 'https://DOCS.Example.com/mcp', 'https://docs.example.com:443/mcp']) expect(resolveResource(mcp, PUBLIC)).toBe(`${PUBLIC}/mcp`);
    for (const rest of [PUBLIC, `${PUBLIC}/`, `${PUBLIC}/api/v1`, 'HTTPS://docs.EXAMPLE.com:443', 'https://docs.example.com:443/api/v1']) expect(resolveResource(rest, PUBLIC)).toBeNull();
  });

  it('refuses another path case, port, scheme or host with invalid_target', () => {
    for (const other of [`${PUBLIC}/MCP`, 'https://docs.example.com:8443/mcp', 'http://docs.example.com/mcp', 'https://docs.example.org/mcp', `${PUBLIC}/api/v2`]) {
      const refused = (() => {
        try {
          return resolveResource(other, PUBLIC);
        } catch (err) {
          return err;
        }
      })();
      expect(refused, other).toBeInstanceOf(OAuthError);
      expect((refused as OAuthError).error).toBe('invalid_target');
    }
  });
});
