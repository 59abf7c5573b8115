import Router from '@koa/router';
import Koa from 'koa';
import { MCP_PATH } from '../auth/oauth/metadata.js';
import { withAuditContext } from '../core/audit.js';
import { apiRouter } from './api/router.js';
import type { ApiRoute } from './api/route.js';
import { mcpRoutes } from './mcp/route.js';
import { METRICS_PATH, metricsRoutes } from './metrics/route.js';
import { varyOnCredential } from './middleware/caching.js';
import { errorHandler } from './middleware/error-handler.js';
import { requestId } from './middleware/request-id.js';
import { securityHeaders } from './middleware/security-headers.js';
import type { Services } from './services.js';
import type { AppState } from './state.js';
import { forwardedOnlyFromProxies } from './trusted-proxies.js';
import { adminGroupRoutes } from './web/admin-groups.js';
import { storableAddress } from './web/storable-address.js';
import { adminSharingRoutes } from './web/admin-sharing.js';
import { adminUserRoutes } from './web/admin-users.js';
import { inviteRoutes } from './web/invite.js';
import { passwordResetRoutes } from './web/password-reset.js';
import { documentRoutes } from './web/library-documents.js';
import { documentListRoutes } from './web/library-list.js';
import { trashRoutes } from './web/library-trash.js';
import { viewRoutes } from './web/library-view.js';
import { projectRoutes } from './web/library-projects.js';
import { sharingRoutes } from './web/library-sharing.js';
import { searchRoutes } from './web/library-search.js';
import { sourceRoutes } from './web/library-sources.js';
import { labelRoutes } from './web/library-labels.js';
import { uploadRoutes } from './web/library-upload.js';
import { loginRoutes } from './web/login.js';
import { webSession } from './web/session.js';
import { noticeRoutes } from './web/notices.js';
import { adminSourceRoutes } from './web/admin-sources.js';
import { ssoRoutes } from './web/sso.js';
import { trustedHeaderSignIn } from './web/trusted-header.js';
import { settingsAccountRoutes } from './web/settings-account.js';
import { settingsKeysRoutes } from './web/settings-keys.js';
import { settingsSecurityRoutes } from './web/settings-security.js';
import { adminAuditRoutes } from './web/admin-audit.js';
import { adminMailRoutes } from './web/admin-mail.js';
import { setupRoutes } from './web/setup.js';
import { sudoRoutes } from './web/sudo.js';
import { staticRoutes } from './web/static.js';

export interface AppOptions {
  /** /api/v1 routes (see routes.ts). */
  routes: ApiRoute[];
  /** Extra page/endpoint routers mounted beside the built-in pages (OAuth, settings pages of later capabilities). */
  extraRouters?: ((router: Router<AppState>, s: Services) => void)[];
  /** Further requests whose log line goes at `debug` (the daemon's: until the setup link is used, on a terminal). */
  quietRequests?: (ctx: { path: string; status: number }) => Promise<boolean>;
}

/**
 * Every page and form route on one router: the web UI, and what `extra` mounts (OAuth's pages). Exported so that the
 * permission matrix test can list them without a daemon (test/access/permission-matrix.test.ts).
 */
export function mountPages(pages: Router<AppState>, s: Services, extra: NonNullable<AppOptions['extraRouters']>): void {
  searchRoutes(pages, s);
  projectRoutes(pages, s);
  sharingRoutes(pages, s);
  sourceRoutes(pages, s);
  labelRoutes(pages, s);
  documentListRoutes(pages, s);
  documentRoutes(pages, s);
  trashRoutes(pages, s);
  viewRoutes(pages, s);
  uploadRoutes(pages, s);
  pages.get('settings', '/settings', (ctx) => ctx.redirect('/settings/keys'));
  loginRoutes(pages, s);
  ssoRoutes(pages, s);
  setupRoutes(pages, s);
  settingsKeysRoutes(pages, s);
  settingsAccountRoutes(pages, s);
  adminUserRoutes(pages, s);
  adminGroupRoutes(pages, s);
  adminSharingRoutes(pages, s);
  inviteRoutes(pages, s);
  passwordResetRoutes(pages, s);
  settingsSecurityRoutes(pages, s);
  sudoRoutes(pages, s);
  adminAuditRoutes(pages, s);
  adminSourceRoutes(pages, s);
  noticeRoutes(pages, s);
  adminMailRoutes(pages, s);
  for (const mount of extra) mount(pages, s);
}

/** Builds the Koa application without listening; daemon.ts owns the socket and the lifecycle. */
export function createApp(s: Services, opts: AppOptions): Koa<AppState> {
  // Only the entries our own proxies appended can be trusted: the leftmost ones are whatever the client sent.
  const app = new Koa<AppState>({ proxy: s.config.trustProxy !== false, maxIpsCount: s.config.proxyHops });
  app.silent = true; // errors are logged by errorHandler, not printed by koa

  const api = apiRouter(s, opts.routes);
  // /mcp authenticates by bearer credential alone, like /api/v1: no web session, cookie or CSRF token.
  const mcp = new Router<AppState>();
  mcpRoutes(mcp, s, opts.routes);
  // /metrics: Prometheus, with a token or on loopback only (metrics/access.ts); no web session either.
  const scrape = new Router<AppState>();
  metricsRoutes(scrape, s);
  const pages = new Router<AppState>();
  mountPages(pages, s, opts.extraRouters ?? []);
  const assets = new Router<AppState>();
  staticRoutes(assets);

  const sessions = webSession(s);
  // Before anything reads the client's address: a --trust-proxy list trusts X-Forwarded-* from its peers alone.
  const forwarded = forwardedOnlyFromProxies(s.config.trustProxy);
  if (forwarded) app.use(forwarded);
  app.use(
    requestId(s.log, {
      // Scrapes and a load balancer's passing health checks come several times a minute per replica.
      quiet: (ctx) => ((ctx.path === '/api/v1/health' || ctx.path === '/metrics') && ctx.status === 200) || (opts.quietRequests?.(ctx) ?? false),
      finished: (ctx, seconds) => s.metrics.request(ctx.method, routeOf(ctx as MatchedContext), ctx.status, seconds),
    }),
  );
  // What audit events recorded while serving the request are about: who is named once a credential or session says.
  app.use((ctx, next) => withAuditContext({ actor: null, via: 'anonymous', clientIp: ctx.ip, userAgent: ctx.get('user-agent') || null, requestId: ctx.state.requestId }, next));
  app.use(securityHeaders({ hsts: s.publicUrl().startsWith('https:') }));
  app.use(errorHandler());
  app.use(api.routes());
  app.use(api.allowedMethods()); // not `throw`: koa-router 13 then omits the Allow header (errorHandler adds the body)
  app.use(mcp.routes());
  app.use(scrape.routes());
  // /api/v1 ends at the API router: the pages' allowedMethods must not answer for it (it would drop Allow).
  app.use((ctx, next) => (ctx.path.startsWith('/api/v1/') ? undefined : storableAddress(ctx, next)));
  // Before the session: an asset any cache may keep must never carry a renewed session cookie to the next person.
  app.use(assets.routes());
  // A page answer a browser may keep (a thumbnail, an original) is the signed-in person's: keyed by their cookie.
  app.use(async (ctx, next) => {
    await next();
    varyOnCredential(ctx, 'Cookie');
  });
  app.use(sessions);
  const headerSignIn = trustedHeaderSignIn(s);
  if (headerSignIn) app.use(headerSignIn);
  app.use(pages.routes());
  app.use(pages.allowedMethods({ throw: true }));
  return app;
}

/**
 * The route a request matched, for metrics, never the raw path (every id would be a time series of its own): an API,
 * MCP or /metrics route by its name, a page by its pattern (`/documents/:id`), as pages reuse the API's names
 * (`search`, `projects.create`) and would be counted as its requests. koa-router leaves both on the context.
 */
type MatchedContext = { path: string; _matchedRouteName?: string; _matchedRoute?: string | RegExp };

function routeOf(ctx: MatchedContext): string {
  const named = ctx.path.startsWith('/api/v1/') || ctx.path === MCP_PATH || ctx.path === METRICS_PATH;
  if (named && ctx._matchedRouteName) return ctx._matchedRouteName;
  return ctx._matchedRoute === undefined ? 'unmatched' : String(ctx._matchedRoute);
}
