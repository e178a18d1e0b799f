/**
 * `/keys` under the external API: the portal's API keys, managed by a key with the scope
 * `tokens:manage`. A key created here gets at most the scopes of the key that creates it, and
 * acts as that key's owner. Thin: parse → `ApiKeysService` → envelope.
 *
 * @see docs/how-to/restrict-an-api-key.md
 * @see docs/decisions/0037-api-keys.md
 */
import type { FastifyInstance } from 'fastify';
import type { ApiKeysService } from '../accounts/api-keys-service.ts';
import type { KeyPrincipal } from '../accounts/principal.ts';
import { AppError, UsageError, type ErrorCode } from '../platform/errors.ts';
import {
  ApiKeyListEnvelope,
  ApiKeyUsageSchema,
  ApiKeyWithSecret,
  KeyParams,
  NewApiKeyBodySchema,
  RevokedApiKeyEnvelope,
  RotateApiKeyBodySchema,
  UsageQuery,
} from './keys-schemas.ts';
import { principalOf } from '../api-kit/request-principal.ts';
import { Envelope, errorResponses, typed, type ApiInstance } from '../api-kit/schema-kit.ts';

const TAGS = ['API keys'];
const MANAGE = { requiredScopes: ['tokens:manage'] as const };
const BODY_ERRORS: ErrorCode[] = ['invalid_request', 'payload_too_large', 'unsupported_media_type'];

/** A service refusal as the API's error: an unknown key is a 404, anything else a 400. */
function asApiError(err: unknown): unknown {
  if (err instanceof UsageError && err.code === 'not_found')
    return new AppError('not_found', err.message, { cause: err });
  return err;
}

const actorOf = (p: KeyPrincipal) => ({
  actor: { type: 'user' as const, id: String(p.userId) },
  via: `through API key ${p.keyId}`,
});

/** The route plugin; pass it in the external API's `routes` option. */
export function keysRoutes(keys: ApiKeysService) {
  return async function routes(app: FastifyInstance): Promise<void> {
    const api = typed(app);
    collectionRoutes(api, keys);
    rotateRoute(api, keys);
    itemRoutes(api, keys);
  };
}

function collectionRoutes(api: ApiInstance, keys: ApiKeysService): void {
  api.get(
    '/keys',
    {
      config: MANAGE,
      schema: {
        summary: 'List API keys',
        description: "The portal's keys, oldest first (never a secret).",
        tags: TAGS,
        response: {
          200: { ...ApiKeyListEnvelope, description: 'The keys.' },
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: { items: await keys.list(principalOf(request).portalId) },
    }),
  );

  api.post(
    '/keys',
    {
      config: MANAGE,
      schema: {
        summary: 'Create an API key',
        description:
          'A key with a name, scopes (at most those of the calling key), an optional expiry, ' +
          'IP allow-list and rate limit. The answer carries the secret: it is shown this once.',
        tags: TAGS,
        body: NewApiKeyBodySchema,
        response: {
          201: {
            ...Envelope(ApiKeyWithSecret, { title: 'CreatedApiKeyEnvelope' }),
            description: 'The key and its secret.',
          },
          ...errorResponses(BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const created = await keys.create({
        portalId: principal.portalId,
        ...request.body,
        grantable: principal.scopes,
        ownerUserId: principal.userId,
        ...actorOf(principal),
      });
      reply.header('cache-control', 'no-store');
      return reply.code(201).send({ success: true as const, data: created });
    },
  );
}

function rotateRoute(api: ApiInstance, keys: ApiKeysService): void {
  api.post(
    '/keys/:id/rotate',
    {
      config: MANAGE,
      // The body is optional: none means `{}` (the previous secret stops at once).
      preValidation: (request, _reply, done) => {
        request.body ??= {};
        done();
      },
      schema: {
        summary: 'Rotate an API key',
        description:
          'A new secret for the key (shown once). The previous secret keeps working for ' +
          '`overlapSeconds` (at most 24 hours), then stops on every instance; without it, it ' +
          'stops at once. Name, scopes, expiry, addresses and limit stay.',
        tags: TAGS,
        params: KeyParams,
        body: RotateApiKeyBodySchema,
        response: {
          200: {
            ...Envelope(ApiKeyWithSecret, { title: 'RotatedApiKeyEnvelope' }),
            description: 'The key and its new secret.',
          },
          ...errorResponses([...BODY_ERRORS, 'not_found']),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const rotated = await keys
        .rotate({
          portalId: principal.portalId,
          keyId: Number(request.params.id),
          overlapSeconds: request.body.overlapSeconds ?? 0,
          ...actorOf(principal),
        })
        .catch((err: unknown) => {
          throw asApiError(err);
        });
      reply.header('cache-control', 'no-store');
      return { success: true as const, data: rotated };
    },
  );
}

function itemRoutes(api: ApiInstance, keys: ApiKeysService): void {
  api.delete(
    '/keys/:id',
    {
      config: MANAGE,
      schema: {
        summary: 'Revoke an API key',
        description:
          'The key stops working at once on every instance (401 `invalid_token`), with any ' +
          'previous secret still in its overlap.',
        tags: TAGS,
        params: KeyParams,
        response: {
          200: { ...RevokedApiKeyEnvelope, description: 'Revoked.' },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const revoked = await keys
        .revoke({
          portalId: principal.portalId,
          keyId: Number(request.params.id),
          ...actorOf(principal),
        })
        .catch((err: unknown) => {
          throw asApiError(err);
        });
      return { success: true as const, data: revoked };
    },
  );

  api.get(
    '/keys/:id/usage',
    {
      config: MANAGE,
      schema: {
        summary: 'Usage of an API key',
        description:
          'Requests per day by status class and by operation, and when and from where the key ' +
          'was last used.',
        tags: TAGS,
        params: KeyParams,
        querystring: UsageQuery,
        response: {
          200: {
            ...Envelope(ApiKeyUsageSchema, { title: 'ApiKeyUsageEnvelope' }),
            description: 'The usage.',
          },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const days = request.query.days === undefined ? 30 : Number(request.query.days);
      const usage = await keys
        .usage(principal.portalId, Number(request.params.id), days)
        .catch((err: unknown) => {
          throw asApiError(err);
        });
      return { success: true as const, data: usage };
    },
  );
}
