/**
 * Routes the provider calls (deauthorize, data deletion) and the data-deletion status page.
 *
 * - `POST /api/auth/partner/deauthorize`   form `signed_request`; revokes every connection of
 *   the provider user made before it was signed (actor provider); 200 also for an unknown user
 *   and for a replay (nothing changes).
 * - `POST /api/auth/partner/data-deletion` form `signed_request`; revokes and erases; answers
 *   `{"url", "confirmation_code"}`, the same code for a replay and while the person's earlier
 *   request is open.
 * - `GET  /data-deletion?code=…`           human-readable status.
 *
 * A forged, malformed, stale or oversized request gets a 4xx, changes nothing and echoes
 * nothing of what it sent.
 *
 * @see docs/partner-connection.md "Callbacks from the provider", "Revocation"
 */
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ErrorEnvelopeSchema, sendError } from '../../platform/error-envelope.ts';
import { AppError } from '../../platform/errors.ts';
import { dataDeletionPage } from './data-deletion-page.tsx';
import type { VerifiedSignedRequest } from './data-deletion.ts';
import type { PartnerService } from '../partner-service.ts';
import { SIGNED_REQUEST_MAX_LENGTH } from './signed-request.ts';

/** Largest callback body, in bytes: a signed_request is a few hundred characters. */
const CALLBACK_BODY_LIMIT = 16 * 1024;

const SignedRequestBody = Type.Object({
  signed_request: Type.String({ minLength: 1, maxLength: SIGNED_REQUEST_MAX_LENGTH }),
});

export async function providerCallbacksRoutes(
  app: FastifyInstance,
  {
    partner,
  }: {
    partner: Pick<
      PartnerService,
      'verifySignedRequest' | 'deauthorize' | 'requestDataDeletion' | 'dataDeletionStatus'
    >;
  },
): Promise<void> {
  // The pages' context parses forms already; add the parser where it does not (tests).
  if (!app.hasContentTypeParser('application/x-www-form-urlencoded')) await app.register(formbody);

  /** The verified request, or a 400 sent (nothing echoed). */
  function verified(request: FastifyRequest, reply: FastifyReply): VerifiedSignedRequest | null {
    // The provider posts a form; a JSON body (parsed by the app's default parser) is refused.
    if (!/^application\/x-www-form-urlencoded\b/i.test(request.headers['content-type'] ?? '')) {
      void sendError(
        reply,
        new AppError('unsupported_media_type', 'Send signed_request as a form field.'),
      );
      return null;
    }
    const { signed_request: signedRequest } = request.body as { signed_request: string };
    const result = partner.verifySignedRequest(signedRequest);
    if (result.ok) return result;
    request.log.warn({ reason: result.reason }, 'provider callback refused: bad signed_request');
    void sendError(reply, new AppError('invalid_request', 'The signed request is not valid.'));
    return null;
  }

  const callbackSchema = {
    consumes: ['application/x-www-form-urlencoded'],
    body: SignedRequestBody,
  };

  app.post(
    '/api/auth/partner/deauthorize',
    {
      bodyLimit: CALLBACK_BODY_LIMIT,
      schema: {
        ...callbackSchema,
        summary: 'Provider deauthorize callback',
        response: {
          200: Type.Object({ success: Type.Literal(true) }),
          '4xx': ErrorEnvelopeSchema,
        },
      },
    },
    async (request, reply) => {
      const signed = verified(request, reply);
      if (signed === null) return reply;
      // A replay, or a request signed before the current connection, is answered alike: the
      // provider only needs to know it was received.
      const outcome = await partner.deauthorize(signed, request.id);
      if (outcome.replayed || outcome.ignored > 0)
        request.log.info(
          { replayed: outcome.replayed, ignored: outcome.ignored },
          'deauthorize changed nothing for some connections',
        );
      return { success: true as const };
    },
  );

  app.post(
    '/api/auth/partner/data-deletion',
    {
      bodyLimit: CALLBACK_BODY_LIMIT,
      schema: {
        ...callbackSchema,
        summary: 'Provider data-deletion callback',
        response: {
          200: Type.Object({
            url: Type.String(),
            confirmation_code: Type.String({ pattern: '^[A-Za-z0-9]+$' }),
          }),
          '4xx': ErrorEnvelopeSchema,
        },
      },
    },
    async (request, reply) => {
      const signed = verified(request, reply);
      if (signed === null) return reply;
      const { url, confirmationCode, replayed } = await partner.requestDataDeletion(
        signed,
        request.id,
      );
      if (replayed) request.log.info('data deletion replayed: same confirmation code');
      return { url, confirmation_code: confirmationCode };
    },
  );

  app.get(
    '/data-deletion',
    {
      schema: {
        querystring: Type.Object({ code: Type.Optional(Type.String({ maxLength: 200 })) }),
        response: { 200: Type.String(), 404: Type.String() },
      },
    },
    async (request, reply) => {
      const { code } = request.query as { code?: string };
      const status =
        code !== undefined && /^[A-Za-z0-9]{1,64}$/.test(code)
          ? await partner.dataDeletionStatus(code)
          : null;
      return reply
        .code(status ? 200 : 404)
        .type('text/html; charset=utf-8')
        .header('referrer-policy', 'no-referrer')
        .header('cache-control', 'no-store')
        .send(dataDeletionPage(status));
    },
  );
}
