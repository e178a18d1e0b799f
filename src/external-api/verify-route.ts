/**
 * `GET /auth/verify`: who the token belongs to and what it may do.
 *
 * @see docs/reference/external-api.md
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { SCOPES } from '../accounts/scopes.ts';
import { principalOf } from './request-principal.ts';
import { Envelope } from './schema-kit.ts';

export const VerificationSchema = Type.Object(
  {
    portalCode: Type.String({
      pattern: '^[0-9]+$',
      description: 'The portal (account) that owns the token.',
    }),
    userId: Type.Integer({ description: 'The user that owns the token.' }),
    isMainAdmin: Type.Boolean({ description: 'Whether that user is the main administrator.' }),
    scopes: Type.Array(Type.Enum(SCOPES, { title: 'Scope' }), {
      description: 'Permissions granted to the token.',
    }),
  },
  { title: 'Verification' },
);

export async function verifyRoute(api: FastifyInstance): Promise<void> {
  api.get(
    '/auth/verify',
    {
      schema: {
        summary: 'Verify the API token',
        description: 'Returns the owner of the token and the scopes granted to it.',
        tags: ['Authentication'],
        response: {
          200: Envelope(VerificationSchema, {
            title: 'VerificationEnvelope',
            description: 'The token is valid: its portal, its owner and its scopes.',
          }),
        },
      },
    },
    // Not async: the answer is sent in the same tick, without a promise (the busiest route).
    (request, reply) => {
      const { portalCode, userId, isMainAdmin, scopes } = principalOf(request);
      void reply.send({
        success: true as const,
        data: { portalCode, userId, isMainAdmin, scopes },
      });
    },
  );
}
