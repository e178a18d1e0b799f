/**
 * `/messaging/drafts` under the external API: Portico-side drafts of a message and its
 * recipients, and sending one. Thin: parse → service → envelope.
 *
 * @see docs/messaging.md
 */
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../../api-kit/request-principal.ts';
import { errorResponses, typed, type ApiInstance } from '../../api-kit/schema-kit.ts';
import type { ErrorCode } from '../../platform/errors.ts';
import { jsonBodyParser } from '../../platform/json-body.ts';
import { Type } from 'typebox';
import {
  DraftEnvelopeSchema,
  DraftPageSchema,
  DraftParamsSchema,
  ListDraftsQuerySchema,
  NewDraftBodySchema,
  PatchDraftBodySchema,
  SendResultSchema,
} from './drafts-schemas.ts';
import type { DraftsService } from './drafts-service.ts';

const TAGS = ['Messaging'];
const READ = { requiredScopes: ['messaging:drafts:read'] as const };
const WRITE = { requiredScopes: ['messaging:drafts:write'] as const };
const BODY_ERRORS: ErrorCode[] = ['invalid_request', 'payload_too_large', 'unsupported_media_type'];

/** The route plugin; pass it in the external API's `routes` option. */
export function draftsRoutes(drafts: DraftsService) {
  return async function routes(app: FastifyInstance): Promise<void> {
    const api = typed(app);
    api.addContentTypeParser(
      'application/merge-patch+json',
      { parseAs: 'string' },
      jsonBodyParser(api),
    );
    collectionRoutes(api, drafts);
    itemRoutes(api, drafts);
    sendRoute(api, drafts);
  };
}

function collectionRoutes(api: ApiInstance, drafts: DraftsService): void {
  api.post(
    '/messaging/drafts',
    {
      config: WRITE,
      schema: {
        summary: 'Create a draft',
        description:
          'A message (`type` `text` with `text.body`, or `template` with `template.name`, ' +
          '`language`, `parameters`), its `recipients` (`contactIds`, `phones` with the ' +
          'country code, and/or every contact with `tag`) and an optional `from` (phone ' +
          'number id). Kept until sent.',
        tags: TAGS,
        body: NewDraftBodySchema,
        response: {
          201: { ...DraftEnvelopeSchema, description: 'The draft.' },
          ...errorResponses(BODY_ERRORS),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send({
        success: true as const,
        data: await drafts.createDraft(principalOf(request), request.body),
      }),
  );

  api.get(
    '/messaging/drafts',
    {
      config: READ,
      schema: {
        summary: 'List drafts',
        description: 'Newest first, a page at a time; `sent=true|false` filters.',
        tags: TAGS,
        querystring: ListDraftsQuerySchema,
        response: {
          200: { ...DraftPageSchema, description: 'A page of drafts.' },
          ...errorResponses(['invalid_request']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await drafts.listDrafts(principalOf(request), request.query),
    }),
  );
}

function itemRoutes(api: ApiInstance, drafts: DraftsService): void {
  api.get(
    '/messaging/drafts/:id',
    {
      config: READ,
      schema: {
        summary: 'Read a draft',
        tags: TAGS,
        params: DraftParamsSchema,
        response: {
          200: { ...DraftEnvelopeSchema, description: 'The draft.' },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await drafts.getDraft(principalOf(request), request.params.id),
    }),
  );

  api.patch(
    '/messaging/drafts/:id',
    {
      config: WRITE,
      schema: {
        summary: 'Change a draft',
        description:
          'The fields given replace the stored ones (`recipients` as a whole; `from: null` ' +
          'clears it). A sent draft cannot change: 409 `conflict`.',
        tags: TAGS,
        params: DraftParamsSchema,
        body: PatchDraftBodySchema,
        response: {
          200: { ...DraftEnvelopeSchema, description: 'The draft, changed.' },
          ...errorResponses([...BODY_ERRORS, 'not_found', 'conflict']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await drafts.patchDraft(principalOf(request), request.params.id, request.body),
    }),
  );

  api.delete(
    '/messaging/drafts/:id',
    {
      config: WRITE,
      schema: {
        summary: 'Delete a draft',
        description: 'Sent or not; the messages it sent stay in the message log.',
        tags: TAGS,
        params: DraftParamsSchema,
        response: {
          200: {
            ...Type.Object(
              {
                success: Type.Literal(true),
                data: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }),
              },
              { title: 'DeletedDraft' },
            ),
            description: 'Deleted.',
          },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await drafts.deleteDraft(principalOf(request), request.params.id),
    }),
  );
}

function sendRoute(api: ApiInstance, drafts: DraftsService): void {
  api.post(
    '/messaging/drafts/:id/send',
    {
      config: { requiredScopes: ['messaging:send'] as const },
      schema: {
        summary: 'Send a draft',
        description:
          'One message per recipient (a phone listed twice, or a listed phone that is a ' +
          "listed contact's, gets one), each refused or queued as `POST /messaging/messages` " +
          'would. Answers the count queued and each refusal with its code. A draft is sent ' +
          'once: again is 409 `conflict`; if every recipient was refused it stays unsent.',
        tags: TAGS,
        params: DraftParamsSchema,
        response: {
          200: { ...SendResultSchema, description: 'What was queued and refused.' },
          ...errorResponses([
            'invalid_request',
            'not_found',
            'conflict',
            'not_connected',
            'unavailable',
          ]),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await drafts.sendDraft(principalOf(request), request.params.id),
    }),
  );
}
