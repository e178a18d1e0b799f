import type { FastifyRequest } from 'fastify';
import type { KeyPrincipal } from '../accounts/principal.ts';
import type { Scope } from '../accounts/scopes.ts';
import { AppError } from '../platform/errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Scopes the token must carry for this route (all of them). */
    requiredScopes?: readonly Scope[];
    /**
     * Reachable without a token (the OpenAPI document only). Loud on purpose: every other route
     * under the API base, unknown ones included, requires a token.
     */
    public?: true;
  }
  interface FastifyRequest {
    /** Set by the external API's authentication hook; null elsewhere. */
    principal: KeyPrincipal | null;
  }
}

/**
 * The authenticated principal of an external API request.
 *
 * @throws AppError `internal_error` if called on a route outside the external API.
 */
export function principalOf(request: FastifyRequest): KeyPrincipal {
  if (!request.principal) throw new AppError('internal_error', 'Route is not authenticated.');
  return request.principal;
}
