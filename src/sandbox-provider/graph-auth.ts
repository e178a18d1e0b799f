/**
 * Who a Graph call is made as. A Graph read carries a person's access token as
 * `Authorization: Bearer {token}` (or an `access_token` query parameter); a dead token is refused with error 190 and a subcode saying
 * why, which is how an app learns that a person revoked it or that the token expired.
 *
 * Every Graph surface that acts for a person (the `me` node today, the WhatsApp Cloud API nodes
 * later) authenticates with `liveUserToken`, so they all refuse dead tokens the same way.
 *
 * @see https://developers.facebook.com/docs/graph-api/guides/error-handling
 * @see https://developers.facebook.com/docs/facebook-login/guides/access-tokens
 */
import type { FastifyRequest } from 'fastify';
import type { GraphFault } from './graph-errors.ts';
import type { TokenRecord } from './sandbox-state.ts';
import type { SurfaceOptions } from './surface.ts';

/**
 * The token of an `Authorization: Bearer …` header (trimmed), else of an `access_token` query
 * parameter (Graph takes either), if the request has one.
 */
export function bearer(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  if (h?.startsWith('Bearer ')) return h.slice(7).trim();
  const query = request.query as Record<string, unknown> | undefined;
  const fromQuery = query?.access_token;
  return typeof fromQuery === 'string' && fromQuery !== '' ? fromQuery : undefined;
}

/** A token the sandbox never issued (or no token at all). */
export const UNPARSABLE_TOKEN: GraphFault = {
  code: 190,
  message: 'Invalid OAuth access token - Cannot parse access token',
};

/**
 * The person's token a Graph call is made with, if it is live. Once the token is known, the call
 * is noted in the call log as made by its person, whether or not the token is still live.
 *
 * @returns `{ record }` for a live token; otherwise `{ fault }`, the Graph error to answer with
 *   HTTP 400: code 190 (unknown token), 190/460 (revoked), 190/463 (expired on the sandbox clock).
 */
export function liveUserToken(
  request: FastifyRequest,
  { state, noteCall }: Pick<SurfaceOptions, 'state' | 'noteCall'>,
): { record: TokenRecord } | { fault: GraphFault } {
  const token = bearer(request);
  const record = token ? state.tokens.get(token) : undefined;
  if (!record) return { fault: UNPARSABLE_TOKEN };
  noteCall(request, record.userId, record.appId);
  if (record.revoked)
    return {
      fault: {
        code: 190,
        subcode: 460,
        message: 'Error validating access token: the session has been invalidated.',
      },
    };
  if (record.expiresAtMs <= state.now())
    return {
      fault: {
        code: 190,
        subcode: 463,
        message: 'Error validating access token: Session has expired.',
      },
    };
  return { record };
}
