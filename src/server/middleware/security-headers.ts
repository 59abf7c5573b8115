import type { Middleware } from 'koa';

/**
 * Headers for every response. Pages may only load their own script and style, can't be framed
 * (clickjacking on consent and key pages), and nothing is cached: responses carry keys and tokens.
 */
export function securityHeaders(opts: { hsts: boolean }): Middleware {
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    ctx.set(
      'Content-Security-Policy',
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
    );
    if (opts.hsts) ctx.set('Strict-Transport-Security', 'max-age=31536000');
    await next();
    if (!ctx.response.get('Cache-Control')) ctx.set('Cache-Control', 'no-store');
  };
}
