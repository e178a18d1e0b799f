/**
 * Graph's error envelope, as every Graph endpoint of the sandbox answers a failure:
 * `{"error": {"message", "type": "OAuthException", "code", "error_subcode"?, "fbtrace_id"}}`.
 * Clients branch on `code` and `error_subcode` (190: the token is invalid, 460 revoked, 463
 * expired; 100 with 36007 / 36008 / 36009: the code expired / its redirect_uri differs / it was
 * used), so codes and subcodes are Graph's own; messages are only Graph-like.
 *
 * @see https://developers.facebook.com/docs/graph-api/guides/error-handling
 */
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { fbtraceId } from './sandbox-state.ts';

/** Response schema of a Graph error. */
export const GraphError = Type.Object({
  error: Type.Object({
    message: Type.String(),
    type: Type.String(),
    code: Type.Integer(),
    error_subcode: Type.Optional(Type.Integer()),
    fbtrace_id: Type.String(),
  }),
});

/** What went wrong, in Graph's terms. */
export interface GraphFault {
  code: number;
  message: string;
  /** `error_subcode`; omitted from the envelope when undefined. */
  subcode?: number;
}

/**
 * Send `fault` as a Graph error with HTTP `status` and a fresh `fbtrace_id`.
 *
 * @returns the reply (sent), for a handler to return.
 */
export function graphError(reply: FastifyReply, status: number, fault: GraphFault): FastifyReply {
  return reply.code(status).send({
    error: {
      message: fault.message,
      type: 'OAuthException',
      code: fault.code,
      ...(fault.subcode !== undefined && { error_subcode: fault.subcode }),
      fbtrace_id: fbtraceId(),
    },
  });
}
