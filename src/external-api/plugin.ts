/**
 * The external API, mounted at `/api/v1/external`. Every route under it, the unknown ones
 * included, passes the authentication hook first (only a route marked `config.public`, the
 * OpenAPI document, is reachable without a token); routes declare the scopes they need in
 * `config.requiredScopes`. Bodies are JSON only (anything else is 415) and at most the app's
 * body limit (413).
 *
 * @see docs/api-tokens.md "Presenting a token", "The envelope"
 */
import type { FastifyInstance } from 'fastify';
import { notFoundHandler } from '../platform/error-envelope.ts';
import { AppError } from '../platform/errors.ts';
import type { PrincipalLookup } from '../accounts/principal.ts';
import { authenticateToken, requireScopes } from './authenticate.ts';
import { openApiDocumentRoute } from './openapi.ts';
import { createApiRateLimits, type RateLimitSettings } from './rate-limits.ts';
import './request-principal.ts';
import { verifyRoute } from './verify-route.ts';

export const EXTERNAL_API_PREFIX = '/api/v1/external';

export interface ExternalApiOptions {
  lookupPrincipal: PrincipalLookup;
  rateLimits: RateLimitSettings;
  /** Feature route plugins mounted under the API base (tickets, ...). */
  routes?: ((api: FastifyInstance) => Promise<void>)[];
}

export async function externalApi(
  api: FastifyInstance,
  options: ExternalApiOptions,
): Promise<void> {
  api.decorateRequest('principal', null);

  // JSON is the only body the API reads: without a parser for them, other media types (text,
  // forms registered elsewhere in the app) are refused with 415 `unsupported_media_type`.
  const json = api.getDefaultJsonParser('error', 'error');
  api.removeAllContentTypeParsers();
  api.addContentTypeParser('application/json', { parseAs: 'string' }, json);

  const limits = createApiRateLimits(options.rateLimits);
  api.addHook('onClose', () => limits.close());

  // The pages' security headers (helmet, in the pages' own context) are for HTML. A JSON API
  // needs only `nosniff`.
  api.addHook('onSend', async (_request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
  });

  api.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config;
    if (config.public) return;
    // The failure budget is consulted only after a failure: a valid token is never refused by
    // the failures of others behind the same address (docs/decisions.md "Trusted proxies").
    let authenticated;
    try {
      authenticated = await authenticateToken(request.headers, options.lookupPrincipal);
    } catch (err) {
      if (err instanceof AppError && err.status === 401) await limits.countFailure(request);
      throw err;
    }
    request.principal = authenticated.principal;
    // Most requests are counted without a promise (see rate-limits.ts): await only one.
    const counting = limits.countTokenRequest(reply, authenticated.tokenHash);
    if (counting) await counting;
    if (config.requiredScopes) requireScopes(request.principal, config.requiredScopes);
  });

  api.setNotFoundHandler(notFoundHandler);

  await api.register(openApiDocumentRoute);
  await api.register(verifyRoute);
  for (const routes of options.routes ?? []) await api.register(routes);
}
