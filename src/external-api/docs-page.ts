/**
 * The API reference page at `/docs`: Scalar's renderer of the OpenAPI document, served from
 * this process (no CDN, no web fonts from elsewhere). It runs Scalar's bundle plus one inline
 * bootstrap script, so it gets its own Content-Security-Policy (same origin only); the strict
 * one stays everywhere else. The page shows only the public API description, never user data.
 *
 * @see https://github.com/scalar/scalar/tree/main/integrations/fastify
 */
import scalar from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';

/** Content-Security-Policy of the API reference page: same origin only. */
const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

export async function apiReferencePage(
  docs: FastifyInstance,
  opts: { /** The OpenAPI document (`app.swagger()`). */ document: () => unknown },
): Promise<void> {
  docs.addHook('onSend', async (_request, reply) => {
    reply.header('content-security-policy', DOCS_CSP);
  });
  await docs.register(scalar, {
    routePrefix: '/docs',
    logLevel: 'warn',
    configuration: {
      pageTitle: 'Portico API reference',
      content: opts.document,
      withDefaultFonts: false,
      telemetry: false,
      // A reference for integrators: no hosted AI agent, no Scalar developer toolbar.
      agent: { disabled: true },
      showDeveloperTools: 'never',
      authentication: { preferredSecurityScheme: 'AuthorizationHeader' },
    },
  });
}
