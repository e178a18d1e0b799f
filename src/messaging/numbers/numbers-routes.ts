/**
 * `GET /messaging/numbers` under the external API: the sender numbers of the connected
 * account. Thin: principal → service → envelope.
 *
 * @see docs/messaging.md
 */
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../../api-kit/request-principal.ts';
import { errorResponses, typed } from '../../api-kit/schema-kit.ts';
import type { ProviderAdapter } from '../provider/provider-adapter.ts';
import { NumbersPageSchema } from '../templates/templates-schemas.ts';

/** The route plugin; pass it in the external API's `routes` option. */
export function numbersRoutes(provider: Pick<ProviderAdapter, 'numbers'>) {
  return async function routes(app: FastifyInstance): Promise<void> {
    const api = typed(app);
    api.get(
      '/messaging/numbers',
      {
        config: { requiredScopes: ['messaging:numbers:read'] as const },
        schema: {
          summary: 'List sender numbers',
          description:
            'Every phone number of every WhatsApp Business Account (WABA) of the connection, in ' +
            'one page (`nextCursor` is null). `id` is the phone number id a message is sent ' +
            '`from`; `onboarding` says whether it may send yet (its WABA subscribed to webhooks, ' +
            'the number registered). Read from the provider and reused for up to ' +
            '`MESSAGING_PROVIDER_CACHE_MS` ' +
            '(30 s by default); no active connection is 409 `not_connected`.',
          tags: ['Messaging'],
          response: {
            200: { ...NumbersPageSchema, description: 'The numbers.' },
            ...errorResponses(['not_connected', 'provider_error', 'provider_timeout']),
          },
        },
      },
      async (request) => ({
        success: true as const,
        data: { items: await provider.numbers(principalOf(request).portalId), nextCursor: null },
      }),
    );
  };
}
