/**
 * The API reference page at `/docs`: Scalar's renderer of the OpenAPI document, served from
 * this process (no CDN, no web fonts from elsewhere). It runs Scalar's bundle plus one inline
 * bootstrap script, so it gets its own Content-Security-Policy (same origin only, and the
 * inline script allowed by its SHA-256 hash, never by 'unsafe-inline'); the strict one stays
 * everywhere else. The page shows only the public API description, never user data.
 *
 * @see https://github.com/scalar/scalar/tree/main/integrations/fastify
 * @see https://www.w3.org/TR/CSP3/#grammardef-hash-source
 */
import { createHash } from 'node:crypto';
import scalar from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';

/** The directives of the page's policy other than `script-src`: same origin only. */
const DOCS_CSP_REST = [
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
];

/** The `'sha256-…'` source of each inline `<script>` of `html` (its text, as CSP hashes it). */
function inlineScriptHashes(html: string): string[] {
  const hashes = new Set<string>();
  for (const m of html.matchAll(/<script(\s[^>]*)?>([\s\S]*?)<\/script>/gi)) {
    if (/\ssrc=/i.test(m[1] ?? '')) continue;
    hashes.add(`'sha256-${createHash('sha256').update(m[2]!, 'utf8').digest('base64')}'`);
  }
  return [...hashes];
}

/**
 * Content-Security-Policy of a response of the page: same origin only; a page's inline scripts
 * run by their hashes (the HTML is rendered per request, so they are taken from the payload).
 */
function docsCsp(payload: unknown): string {
  const hashes = typeof payload === 'string' ? inlineScriptHashes(payload) : [];
  return ["default-src 'self'", ["script-src 'self'", ...hashes].join(' '), ...DOCS_CSP_REST].join(
    '; ',
  );
}

export async function apiReferencePage(
  docs: FastifyInstance,
  opts: { /** The OpenAPI document (`app.swagger()`). */ document: () => unknown },
): Promise<void> {
  docs.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-security-policy', docsCsp(payload));
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
