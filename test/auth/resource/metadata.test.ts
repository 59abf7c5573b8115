import { describe, expect, it } from 'vitest';
import { type Daemon } from '../../helpers/daemon.js';
import { daemonForSuite } from '../../helpers/suite-daemon.js';

/** RFC 9728 protected resource metadata and the RFC 8414 fields MCP clients read, under each registration policy. */
describe('protected resource and authorization server metadata', () => {
  let d: Daemon;
  daemonForSuite((started) => {
    d = started;
  });

  const get = async (path: string) => {
    const res = await fetch(d.url + path);
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };

  it('describes /mcp and the REST API as resources of this authorization server', async () => {
    const mcp = await get('/.well-known/oauth-protected-resource/mcp');
    expect(mcp.status).toBe(200);
    expect(mcp.body).toEqual({
      resource: `${d.url}/mcp`,
      authorization_servers: [d.url],
      scopes_supported: ['read:documents', 'write:documents'],
      bearer_methods_supported: ['header'],
      resource_name: 'docsearch',
    });
    expect(mcp.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(mcp.headers.get('access-control-allow-origin')).toBe('*');
    const rest = await get('/.well-known/oauth-protected-resource');
    expect(rest.body).toEqual({ ...mcp.body, resource: d.url });
  });

  it('names the registration endpoint and metadata-document support (policy open, the default)', async () => {
    const as = await get('/.well-known/oauth-authorization-server');
    expect(as.headers.get('access-control-allow-origin')).toBe('*');
    expect(as.body).toMatchObject({
      issuer: d.url,
      registration_endpoint: `${d.url}/api/oauth/register`,
      client_id_metadata_document_supported: true,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic', 'none'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
    });
  });
});

describe('authorization server metadata with registration off', () => {
  let d: Daemon;
  daemonForSuite(
    (started) => {
      d = started;
    },
    { args: ['--client-registration', 'off'] },
  );

  it('names neither the registration endpoint nor metadata-document support', async () => {
    const body = (await (await fetch(`${d.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(body.registration_endpoint).toBeUndefined();
    expect(body.client_id_metadata_document_supported).toBeUndefined();
    expect(body.authorization_endpoint).toBe(`${d.url}/api/oauth/authorize`);
  });
});
