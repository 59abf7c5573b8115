/**
 * The origins whose pages may call /mcp: the public URL's own and the operator's list (checked at start by
 * config.ts). The MCP transport spec requires servers to validate Origin, so that a web page on another site
 * cannot reach a daemon on 127.0.0.1 through DNS rebinding; clients that are not browsers send no Origin.
 */
export function allowedOrigins(publicUrl: string, extra: string | undefined): ReadonlySet<string> {
  const listed = (extra ?? '').split(',').map((o) => o.trim()).filter(Boolean);
  return new Set([publicUrl, ...listed].map((o) => new URL(o).origin));
}
