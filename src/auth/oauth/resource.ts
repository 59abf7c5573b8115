import { InvalidTarget } from './errors.js';
import { MCP_PATH } from './metadata.js';

/**
 * Resource indicators (RFC 8707). This server issues tokens for two resources: the REST API (`{publicUrl}`,
 * also named `{publicUrl}/` or `{publicUrl}/api/v1`) and the MCP endpoint (`{publicUrl}/mcp`). A token is bound
 * to one of them; the REST API refuses one bound to /mcp (a token an MCP client holds must not be replayable
 * against the whole API), and /mcp accepts only those bound to it.
 *
 * Stored form: null for the REST API — what every token issued without `resource` is for, as before RFC 8707
 * support — and `mcpResource(publicUrl)` for /mcp.
 */

/** The MCP endpoint's resource identifier: the value of `resource` in its tokens and protected resource metadata. */
export function mcpResource(publicUrl: string): string {
  return publicUrl + MCP_PATH;
}

const href = (url: string): string | null => {
  try {
    return new URL(url).href;
  } catch {
    return null;
  }
};

/**
 * The stored form of a `resource` parameter, or invalid_target. Compared as parsed URLs, so that a client that
 * writes the host in upper case or the default port still names the same resource.
 */
export function resolveResource(value: string, publicUrl: string): string | null {
  if (value.includes('#')) throw new InvalidTarget('resource must not contain a fragment (RFC 8707 §2)');
  const asked = href(value);
  if (asked === null) throw new InvalidTarget('resource must be an absolute URL (RFC 8707 §2)');
  if (asked === href(mcpResource(publicUrl))) return mcpResource(publicUrl);
  if ([publicUrl, `${publicUrl}/`, `${publicUrl}/api/v1`].some((rest) => href(rest) === asked)) return null;
  throw new InvalidTarget(`unknown resource ${value}: this server issues tokens for ${mcpResource(publicUrl)} (MCP) and ${publicUrl} (the REST API)`);
}

/** How a stored resource is named in messages. */
export const describeResource = (resource: string | null, publicUrl: string): string => resource ?? `${publicUrl} (the REST API)`;
