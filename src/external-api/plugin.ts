/**
 * The external API, mounted at `/api/v1/external`. Every route under it, the unknown ones
 * included, passes the authentication hook first; routes declare the scopes they need in
 * `config.requiredScopes`.
 *
 * @see ../../../shared/spec/external-api-and-partner-flow.md §4, §5.1
 */
import type { FastifyInstance } from 'fastify';
import { sendError } from '../platform/error-envelope.ts';
import { AppError } from '../platform/errors.ts';
import { authenticate, requireScopes, type PrincipalLookup } from './authenticate.ts';
import './request-principal.ts';
import { verifyRoute } from './verify-route.ts';

export const EXTERNAL_API_PREFIX = '/api/v1/external';

export interface ExternalApiOptions {
  lookupPrincipal: PrincipalLookup;
  /** Feature route plugins mounted under the API base (tickets, ...). */
  routes?: ((api: FastifyInstance) => Promise<void>)[];
}

export async function externalApi(
  api: FastifyInstance,
  options: ExternalApiOptions,
): Promise<void> {
  api.decorateRequest('principal', null);

  api.addHook('onRequest', async (request) => {
    request.principal = await authenticate(request.headers, options.lookupPrincipal);
    const required = request.routeOptions.config.requiredScopes;
    if (required) requireScopes(request.principal, required);
  });

  api.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      new AppError('not_found', `No route ${request.method} ${request.url.split('?')[0] ?? ''}.`),
    ),
  );

  await api.register(verifyRoute);
  for (const routes of options.routes ?? []) await api.register(routes);
}
