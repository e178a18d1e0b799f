/**
 * Development only: one address for the pages. Cookies belong to a host, so a person who signs
 * in at `http://127.0.0.1:3000` and is called back by the provider at `http://localhost:3000`
 * (APP_BASE_URL, the registered redirect URI's origin) arrives without a session or state
 * cookie, and the connection fails. A GET or HEAD for a page on any other host is therefore
 * redirected to the same path on APP_BASE_URL.
 *
 * Pages only: the hook is added in the pages' plugin; `/api/…` (the partner flow's endpoints,
 * whose callback query carries the code and state) and the probes are never redirected, and
 * neither is a form POST (its body would be lost).
 *
 * @see docs/decisions/0009-pages.md
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Add the redirect to the pages of `app` (an encapsulated context).
 *
 * @param canonicalOrigin APP_BASE_URL (scheme, host, port; no path).
 */
export function redirectToCanonicalHost(app: FastifyInstance, canonicalOrigin: string): void {
  const origin = new URL(canonicalOrigin);
  const canonicalHost = origin.host.toLowerCase();
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return;
    if (request.url.startsWith('/api/')) return;
    const host = request.headers.host?.toLowerCase();
    if (!host || host === canonicalHost) return;
    return reply.redirect(`${origin.origin}${request.url}`, 302);
  });
}
