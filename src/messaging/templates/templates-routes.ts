/**
 * `/messaging/templates` under the external API: the provider's message templates of the
 * connected account. Thin: parse → service → envelope.
 *
 * @see docs/messaging.md
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/message-templates
 */
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../../api-kit/request-principal.ts';
import { errorResponses, typed } from '../../api-kit/schema-kit.ts';
import type { ErrorCode } from '../../platform/errors.ts';
import {
  CreatedTemplateSchema,
  DeleteTemplateQuerySchema,
  ListTemplatesQuerySchema,
  NewTemplateBodySchema,
  TemplateNameParamsSchema,
  TemplatesPageSchema,
} from './templates-schemas.ts';
import type { TemplatesService } from './templates-service.ts';
import { Type, type Static } from 'typebox';

const TAGS = ['Messaging'];
const READ = { requiredScopes: ['messaging:drafts:read'] as const };
const WRITE = { requiredScopes: ['messaging:drafts:write'] as const };
const PROVIDER: ErrorCode[] = ['not_connected', 'provider_error', 'provider_timeout'];

/** The route plugin; pass it in the external API's `routes` option. */
export function templatesRoutes(templates: TemplatesService) {
  return async function routes(app: FastifyInstance): Promise<void> {
    const api = typed(app);
    api.get(
      '/messaging/templates',
      {
        config: READ,
        schema: {
          summary: 'List message templates',
          description:
            "The provider's templates of every WABA of the connection, a page at a time " +
            '(`nextCursor` → `cursor` until null). Filters: `status` (e.g. `APPROVED`), `name` ' +
            '(contains), `wabaId`.',
          tags: TAGS,
          querystring: ListTemplatesQuerySchema,
          response: {
            200: { ...TemplatesPageSchema, description: 'A page of templates.' },
            ...errorResponses(['invalid_request', ...PROVIDER]),
          },
        },
      },
      async (request) => ({
        success: true as const,
        data: await templates.listTemplates(principalOf(request).portalId, request.query),
      }),
    );

    api.post(
      '/messaging/templates',
      {
        config: WRITE,
        schema: {
          summary: 'Submit a message template',
          description:
            "The provider's own template object. Checked before it is forwarded: the name " +
            '(lower case, digits, `_`, ≤ 512), exactly one BODY (≤ 1,024 characters), variables ' +
            '`{{1}}`, `{{2}}`, … without a gap, each with an example in `example.body_text`. ' +
            'Answers 201 with status `PENDING`: the provider reviews it. `wabaId` is needed only ' +
            'when the connection has several accounts.',
          tags: TAGS,
          body: NewTemplateBodySchema,
          response: {
            201: { ...CreatedTemplateSchema, description: 'Submitted for review.' },
            ...errorResponses([
              'invalid_request',
              'conflict',
              'payload_too_large',
              'unsupported_media_type',
              ...PROVIDER,
            ]),
          },
        },
      },
      async (request, reply) =>
        reply.code(201).send({
          success: true as const,
          // The provider echoes the category it was sent, one of the schema's three.
          data: (await templates.createTemplate(
            principalOf(request).portalId,
            request.body,
          )) as Static<typeof CreatedTemplateSchema>['data'],
        }),
    );

    api.delete(
      '/messaging/templates/:name',
      {
        config: WRITE,
        schema: {
          summary: 'Delete a message template',
          description:
            'Deletes the template (every language of it) at the provider. Unknown name: 404.',
          tags: TAGS,
          params: TemplateNameParamsSchema,
          querystring: DeleteTemplateQuerySchema,
          response: {
            200: {
              ...Type.Object(
                {
                  success: Type.Literal(true),
                  data: Type.Object({
                    name: Type.String(),
                    wabaId: Type.String(),
                    deleted: Type.Literal(true),
                  }),
                },
                { title: 'DeletedTemplate' },
              ),
              description: 'Deleted.',
            },
            ...errorResponses(['invalid_request', 'not_found', ...PROVIDER]),
          },
        },
      },
      async (request) => ({
        success: true as const,
        data: await templates.deleteTemplate(
          principalOf(request).portalId,
          request.params.name,
          request.query.wabaId,
        ),
      }),
    );
  };
}
