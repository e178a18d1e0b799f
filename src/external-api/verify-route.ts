/**
 * `GET /auth/verify`: who the token belongs to and what it may do.
 *
 * @see docs/reference/external-api.md
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { SCOPES } from '../accounts/scopes.ts';
import { principalOf } from '../api-kit/request-principal.ts';
import { Envelope, Iso, Nullable } from '../api-kit/schema-kit.ts';

export const VerifiedKeySchema = Type.Object(
  {
    id: Type.Integer({ description: 'The API key used.' }),
    name: Type.String({ description: 'What the key is for.' }),
    expiresAt: Nullable(Iso('When the key stops working; null: never.')),
    allowedIps: Nullable(
      Type.Array(Type.String(), {
        description: 'The CIDR ranges the key may be used from; null: any address.',
      }),
    ),
  },
  {
    title: 'VerifiedKey',
    examples: [
      {
        id: 7,
        name: 'Billing server',
        expiresAt: '2027-06-30T00:00:00.000Z',
        allowedIps: ['203.0.113.0/24', '2001:db8::/32'],
      },
    ],
  },
);

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
    key: VerifiedKeySchema,
  },
  { title: 'Verification' },
);

export async function verifyRoute(api: FastifyInstance): Promise<void> {
  api.get(
    '/auth/verify',
    {
      schema: {
        summary: 'Verify the API token',
        description:
          'Returns the owner of the token, the scopes granted to it, and the API key used: its ' +
          'name, expiry and allowed addresses.',
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
      const p = principalOf(request);
      void reply.send({
        success: true as const,
        data: {
          portalCode: p.portalCode,
          userId: p.userId,
          isMainAdmin: p.isMainAdmin,
          scopes: p.scopes,
          key: {
            id: p.keyId,
            name: p.keyName,
            expiresAt: p.expiresAt === null ? null : new Date(p.expiresAt).toISOString(),
            allowedIps: p.allowedIps,
          },
        },
      });
    },
  );
}
