/**
 * Graph's error envelope, as every Graph endpoint of the sandbox answers a failure:
 * `{"error": {"message", "type": "OAuthException", "code", "error_subcode"?, "error_data"?,
 * "fbtrace_id"}}` (`error_data: {messaging_product, details}` on the Cloud API's errors).
 * Clients branch on `code` and `error_subcode` (190: the token is invalid, 460 revoked, 463
 * expired; 100 with 36007 / 36008 / 36009: the code expired / its redirect_uri differs / it was
 * used), so codes and subcodes are Graph's own; messages are only Graph-like.
 *
 * @see https://developers.facebook.com/docs/graph-api/guides/error-handling
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
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
    error_data: Type.Optional(
      Type.Object({ messaging_product: Type.Literal('whatsapp'), details: Type.String() }),
    ),
    fbtrace_id: Type.String(),
  }),
});

/** What went wrong, in Graph's terms. */
export interface GraphFault {
  code: number;
  message: string;
  /** `error_subcode`; omitted from the envelope when undefined. */
  subcode?: number;
  /** A Cloud API error's `error_data.details` (with `messaging_product: whatsapp`). */
  details?: string;
  /** The error's `type` (default `OAuthException`; Graph says `GraphMethodException` for a node
   * that does not exist). */
  type?: 'OAuthException' | 'GraphMethodException';
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
      type: fault.type ?? 'OAuthException',
      code: fault.code,
      ...(fault.subcode !== undefined && { error_subcode: fault.subcode }),
      ...(fault.details !== undefined && {
        error_data: { messaging_product: 'whatsapp', details: fault.details },
      }),
      fbtrace_id: fbtraceId(),
    },
  });
}
