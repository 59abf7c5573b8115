/**
 * The permission matrix (issues 50, 57): every cell of docs/permissions.md's tables, done through the real
 * interfaces — the REST API, the web pages and forms, MCP over /mcp — against one daemon (SQLite here; the
 * `postgresql` project runs the file again on PostgreSQL), each refusal read back from the database as changing
 * nothing, each 404 compared with a missing id's, each allowed cell's effect read back (matrix-world.ts).
 *
 * It also fails when a route of the daemon's routers, an MCP tool or an MCP resource has neither a row nor a line
 * under "Routes without a row": the routes are listed from the routers themselves, the tools and resources through
 * the SDK's client.
 */
import Router from '@koa/router';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthProvider } from '../../src/auth/oauth/provider.js';
import { apiRouter } from '../../src/server/api/router.js';
import { mountPages } from '../../src/server/app.js';
import { staticRoutes } from '../../src/server/web/static.js';
import { mcpRoutes } from '../../src/server/mcp/route.js';
import { metricsRoutes } from '../../src/server/metrics/route.js';
import { oauthRouters } from '../../src/server/oauth/index.js';
import { apiRoutes } from '../../src/server/routes.js';
import type { Services } from '../../src/server/services.js';
import type { AppState } from '../../src/server/state.js';
import { SPECS } from './matrix-rows.js';
import { readMatrix, readUnrowed } from './matrix-table.js';
import { Matrix } from './matrix-world.js';

const rows = readMatrix();

/** Every route the daemon's routers mount (createApp: the API, the pages with OAuth's, /mcp, /metrics), as `METHOD /path`. */
function routerRoutes(): string[] {
  const s = {} as Services;
  const seen: string[] = [];
  const list = (router: Router<AppState>, rest = false) => {
    for (const layer of router.stack) {
      const path = rest ? String(layer.path).replace(/:(\w+)/g, '{$1}') : String(layer.path);
      const methods = layer.methods.filter((m) => m !== 'HEAD');
      if (methods.length > 4) seen.push(`ALL ${path}`);
      else for (const m of methods) seen.push(`${m} ${path}`);
    }
  };
  list(apiRouter(s, apiRoutes(s)), true);
  const pages = new Router<AppState>();
  mountPages(pages, s, [oauthRouters({} as OAuthProvider)]);
  list(pages);
  const assets = new Router<AppState>();
  staticRoutes(assets);
  list(assets);
  const mcp = new Router<AppState>();
  mcpRoutes(mcp, s, []);
  list(mcp);
  const scrape = new Router<AppState>();
  metricsRoutes(scrape, { config: { host: '127.0.0.1' } } as unknown as Services);
  list(scrape);
  return seen;
}

describe('the permission matrix of docs/permissions.md', () => {
  const m = new Matrix(SPECS);

  beforeAll(() => m.start(), 300_000);
  afterAll(() => m.stop());

  it('has a row, or a reason for none, for every route of the routers, every MCP tool and resource', async () => {
    const named = new Set(rows.filter((r) => r.surface !== 'MCP').map((r) => r.operation));
    const unrowed = readUnrowed();
    const routes = routerRoutes();
    expect(routes.filter((r) => !named.has(r) && !unrowed.includes(r)), 'routes with neither a row in docs/permissions.md nor a reason for none').toEqual([]);
    expect(
      [...named, ...unrowed].filter((r) => !routes.includes(r)),
      'rows and reasons in docs/permissions.md for routes no router has',
    ).toEqual([]);
    expect(unrowed.filter((r) => named.has(r)), 'routes both with a row and without').toEqual([]);

    // "Allowed" is the documented success status: a REST row's `ok` is one of its route's 2xx responses.
    const s = {} as Services;
    for (const route of apiRoutes(s)) {
      const op = `${route.method} /api/v1${route.path.replace(/:(\w+)/g, '{$1}')}`;
      const documented = Object.keys(route.responses).map(Number).filter((x) => x >= 200 && x < 300);
      expect(documented, `${op}: the documented success status of its row`).toContain(SPECS.rest[op]?.ok);
    }

    const owner = await m.ownerMcp();
    const mcpNamed = rows.filter((r) => r.surface === 'MCP').map((r) => r.operation);
    const tools = (await owner.listTools()).tools.map((t) => `tool ${t.name}`);
    const templates = (await owner.listResourceTemplates()).resourceTemplates.map((t) => `resource ${t.uriTemplate}`);
    // Each listed resource must be one of a template's, or have a row of its own.
    const listed = (await owner.listResources()).resources.map((r) => r.uri);
    const ofTemplate = (uri: string) => templates.some((t) => new RegExp(`^${t.slice('resource '.length).replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`).test(uri));
    expect(listed.length, 'resources/list lists the owner\'s documents').toBeGreaterThan(0);
    expect(listed.filter((uri) => !ofTemplate(uri) && !mcpNamed.includes(`resource ${uri}`)), 'resources without a row').toEqual([]);
    const capabilities = Object.keys(owner.getServerCapabilities() ?? {});
    expect(capabilities.filter((c) => !['tools', 'resources', 'logging', 'completions'].includes(c)), 'MCP capabilities the matrix does not cover (prompts need rows)').toEqual([]);
    expect(mcpNamed.sort()).toEqual([...tools, ...templates, 'resources/list'].sort());
  });

  for (const row of rows) {
    it(`${row.surface}: ${row.operation}`, { timeout: 300_000 }, async () => {
      const got = await m.run(row);
      const wrong = Object.entries(got).filter(([p, cell]) => cell !== row.expected[p as keyof typeof got]);
      expect(got, `cells that differ: ${JSON.stringify(Object.fromEntries(wrong), null, 1)}`).toEqual(row.expected);
    });
  }
});

