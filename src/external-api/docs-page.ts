/**
 * The API reference page at `/docs`: Scalar's renderer of the OpenAPI document, served from
 * this process (no CDN, no web fonts from elsewhere). It runs Scalar's bundle plus one inline
 * bootstrap script, so it gets its own Content-Security-Policy (same origin only, and the
 * inline script allowed by its SHA-256 hash, never by 'unsafe-inline'); the strict one stays
 * everywhere else. The page shows only the public API description, never user data.
 *
 * Its two large bodies do not change while the process runs, so they are served from
 * `platform/cached-body.ts`: compressed once (`br`, `gzip`), each with its `ETag` (304 on a
 * conditional request). Scalar's script (3.6 MB) is referenced with its version in the query
 * (`js/scalar.js?v=…`), cached for a year under that address, and revalidated under any
 * other; the document (`openapi.json`) is revalidated on every use (`no-cache`), as the API's
 * own copy is. The HTML and the YAML copy are compressed per request (`@fastify/compress`). The
 * page carries no secret nor session, so compression reveals nothing (unlike a page with a
 * CSRF token: BREACH).
 *
 * @see https://github.com/scalar/scalar/tree/main/integrations/fastify
 * @see https://www.w3.org/TR/CSP3/#grammardef-hash-source
 * @see docs/decisions/0041-compressed-cached-reference.md
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fastifyCompress from '@fastify/compress';
import scalar from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';
import { cachedBody, RESPONSE_COMPRESSION, type CachedBody } from '../platform/cached-body.ts';

/** Where the page is, and the routes of its script and document below it (Scalar's). */
const PREFIX = '/docs';
const SCRIPT_ROUTE = `${PREFIX}/js/scalar.js`;
const DOCUMENT_ROUTE = `${PREFIX}/openapi.json`;

/**
 * Scalar's standalone bundle: the file its plugin reads and serves (`dist/js/standalone.js`
 * beside the plugin's entry), read once per process, and its version (a digest of it).
 */
let scalarScript: { body: CachedBody; version: string } | undefined;
function scalarScriptBody(): { body: CachedBody; version: string } {
  if (!scalarScript) {
    const entry = createRequire(import.meta.url).resolve('@scalar/fastify-api-reference');
    const bytes = readFileSync(join(dirname(entry), 'js', 'standalone.js'));
    const version = createHash('sha256').update(bytes).digest('base64url').slice(0, 16);
    const body = cachedBody(() => bytes, {
      contentType: 'application/javascript; charset=utf-8',
      // Under its versioned address the script never changes; under another, revalidate.
      cacheControl: (request) =>
        (request.query as { v?: unknown }).v === version
          ? 'public, max-age=31536000, immutable'
          : 'no-cache',
    });
    scalarScript = { body, version };
  }
  return scalarScript;
}

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
  const script = scalarScriptBody();
  const document = cachedBody(() => JSON.stringify(opts.document()), {
    contentType: 'application/json; charset=utf-8',
    cacheControl: 'no-cache',
  });
  docs.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-security-policy', docsCsp(payload));
  });
  // The script and the document are answered here, from their cached representations; Scalar's
  // own handlers (which would read, normalise and send them uncompressed) never run.
  docs.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url;
    if (route === SCRIPT_ROUTE) return script.body.send(request, reply);
    if (route === DOCUMENT_ROUTE) return document.send(request, reply);
    return undefined;
  });
  // The page itself and the YAML copy: compressed per request. Before Scalar's routes: the
  // plugin hooks the routes registered after it.
  await docs.register(fastifyCompress, RESPONSE_COMPRESSION);
  await docs.register(scalar, {
    routePrefix: PREFIX,
    logLevel: 'warn',
    configuration: {
      pageTitle: 'Portico API reference',
      // The bundled script, by a versioned address that may be cached for good.
      cdn: `js/scalar.js?v=${script.version}`,
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
