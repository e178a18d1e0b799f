/**
 * `/crm/contacts` under the external API: parse → service → shape the response. Validation
 * failures use the contacts' own messages (contact-validation.ts), so a route's 400 and an
 * import row's failure read alike.
 *
 * @see docs/reference/external-api.md "The capability areas"
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../api-kit/request-principal.ts';
import { errorResponses, typed, type ApiInstance } from '../api-kit/schema-kit.ts';
import type { ErrorCode } from '../platform/errors.ts';
import { jsonBodyParser } from '../platform/json-body.ts';
import {
  ContactDetailEnvelopeSchema,
  ContactEnvelopeSchema,
  ContactFieldsSchema,
  ContactPageSchema,
  ContactParamsSchema,
  ErasureSchema,
  IMPORT_MAX,
  PAGE_LIMIT_DEFAULT,
  ImportBodySchema,
  ImportResultSchema,
  ListContactsQuerySchema,
  PatchContactBodySchema,
  PhoneParamsSchema,
  UpsertContactBodySchema,
} from './contact-schemas.ts';
import { contactSchemaError } from './contact-validation.ts';
import type { ContactsService } from './contacts-service.ts';

const TAGS = ['CRM contacts'];
const WRITE = { requiredScopes: ['crm:contacts:write'] as const };
const READ = { requiredScopes: ['crm:contacts:read'] as const };
const BODY_ERRORS: ErrorCode[] = ['invalid_request', 'payload_too_large', 'unsupported_media_type'];

/** An import body of 1,000 full contacts is about 600 KiB; the app's 64 KiB is for the rest. */
export const IMPORT_BODY_LIMIT_BYTES = 2 * 1024 * 1024;

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'Optional, 1–255 characters. A retry with the same key and body within 24 hours ' +
        'returns the first response and creates nothing; the same key with another body is 409 ' +
        '`idempotency_conflict`.',
    }),
  ),
});

/** The route plugin; pass it in the external API's `routes` option. */
export function contactsRoutes(contacts: ContactsService) {
  return async function routes(app: FastifyInstance): Promise<void> {
    const api = typed(app);
    // RFC 7396's media type for PATCH, read as JSON.
    api.addContentTypeParser(
      'application/merge-patch+json',
      { parseAs: 'string' },
      jsonBodyParser(api),
    );
    api.setSchemaErrorFormatter(contactSchemaError);
    createRoute(api, contacts);
    upsertRoute(api, contacts);
    listRoute(api, contacts);
    getRoute(api, contacts);
    patchRoute(api, contacts);
    eraseRoute(api, contacts);
    importRoute(api, contacts);
  };
}

function createRoute(api: ApiInstance, contacts: ContactsService): void {
  api.post(
    '/crm/contacts',
    {
      config: WRITE,
      schema: {
        summary: 'Create a contact',
        description:
          'Creates a contact of the portal. `phone` is required, in any notation with its ' +
          'country code; it is stored in E.164 and is unique within the portal (409 `conflict` ' +
          "with the existing contact's id in `details`). Send an `Idempotency-Key` to retry " +
          'safely.',
        tags: TAGS,
        headers: IdempotencyHeaders,
        body: ContactFieldsSchema,
        response: {
          201: { ...ContactEnvelopeSchema, description: 'The contact.' },
          ...errorResponses([...BODY_ERRORS, 'conflict', 'idempotency_conflict']),
        },
      },
    },
    async (request, reply) => {
      const result = await contacts.createContact({
        principal: principalOf(request),
        input: request.body,
        idempotencyKey: request.headers['idempotency-key'],
      });
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      // A replay repeats the stored first response, and only a 201 is ever stored.
      return reply.code(result.status as 201).send(result.body);
    },
  );
}

function upsertRoute(api: ApiInstance, contacts: ContactsService): void {
  api.put(
    '/crm/contacts/by-phone/:phone',
    {
      // The path holds a phone number: logs show the route's pattern, never the number.
      config: { ...WRITE, logRoutePattern: true },
      schema: {
        summary: 'Create or update a contact by phone',
        operationId: 'upsertContactByPhone',
        description:
          'Upsert by phone (URL-encoded, with its country code; normalised to E.164). Creates ' +
          'the contact (201) or sets the fields the body carries, leaving the others as they ' +
          'are (200).',
        tags: TAGS,
        params: PhoneParamsSchema,
        body: UpsertContactBodySchema,
        response: {
          200: { ...ContactEnvelopeSchema, description: 'The contact, updated.' },
          201: { ...ContactEnvelopeSchema, description: 'The contact, created.' },
          ...errorResponses(BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { created, contact } = await contacts.upsertByPhone(
        principalOf(request),
        request.params.phone,
        request.body,
      );
      return reply.code(created ? 201 : 200).send({ success: true as const, data: contact });
    },
  );
}

function listRoute(api: ApiInstance, contacts: ContactsService): void {
  api.get(
    '/crm/contacts',
    {
      config: READ,
      schema: {
        summary: 'List contacts',
        description:
          "The portal's contacts, newest first, a page at a time (`nextCursor` → `cursor` " +
          'until null; contacts added meanwhile never cause duplicates or gaps). Filters: ' +
          '`tag`, `consent`, `q` (case-insensitive prefix of first name, last name, email, ' +
          'or the phone digits), `updatedSince`.',
        tags: TAGS,
        querystring: ListContactsQuerySchema,
        response: {
          200: { ...ContactPageSchema, description: 'A page of contacts, newest first.' },
          ...errorResponses(['invalid_request']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      // Ajv filled `limit`'s default; the fallback only satisfies the type.
      data: await contacts.listContacts(principalOf(request), {
        ...request.query,
        limit: request.query.limit ?? PAGE_LIMIT_DEFAULT,
      }),
    }),
  );
}

function getRoute(api: ApiInstance, contacts: ContactsService): void {
  api.get(
    '/crm/contacts/:id',
    {
      config: READ,
      schema: {
        summary: 'Read a contact',
        description:
          "One contact of the token's portal with `consentHistory`: its newest 20 consent " +
          'changes (from, to, source, the keyword message), newest first; any other id is 404.',
        tags: TAGS,
        params: ContactParamsSchema,
        response: {
          200: {
            ...ContactDetailEnvelopeSchema,
            description: 'The contact, with its newest consent changes.',
          },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await contacts.getContact(principalOf(request), request.params.id),
    }),
  );
}

function patchRoute(api: ApiInstance, contacts: ContactsService): void {
  api.patch(
    '/crm/contacts/:id',
    {
      config: WRITE,
      schema: {
        summary: 'Update a contact (JSON merge patch)',
        operationId: 'updateContact',
        description:
          'RFC 7396 merge patch (`application/merge-patch+json` or `application/json`): the ' +
          'fields given replace the stored ones, `null` removes a field, and in `attributes` ' +
          'each key is merged (`null` removes it). A new phone must not be another contact’s ' +
          '(409 `conflict`).',
        tags: TAGS,
        params: ContactParamsSchema,
        body: PatchContactBodySchema,
        response: {
          200: { ...ContactEnvelopeSchema, description: 'The contact, updated.' },
          ...errorResponses([...BODY_ERRORS, 'not_found', 'conflict']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await contacts.patchContact(principalOf(request), request.params.id, request.body),
    }),
  );
}

function eraseRoute(api: ApiInstance, contacts: ContactsService): void {
  api.delete(
    '/crm/contacts/:id',
    {
      config: WRITE,
      schema: {
        summary: 'Erase a contact (GDPR art. 17)',
        operationId: 'eraseContact',
        description:
          'Deletes the contact and everything that names the person elsewhere (stored ' +
          'idempotent responses deleted; message recipients anonymised once messaging ' +
          'exists). The answer says what was erased. Audited by id only.',
        tags: TAGS,
        params: ContactParamsSchema,
        response: {
          200: { ...ErasureSchema, description: 'What was erased.' },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const erasure = await contacts.eraseContact(principal, request.params.id, {
        actor: { type: 'user', id: String(principal.userId) },
        requestId: request.id,
      });
      return { success: true as const, data: erasure };
    },
  );
}

function importRoute(api: ApiInstance, contacts: ContactsService): void {
  api.post(
    '/crm/contacts/import',
    {
      config: WRITE,
      bodyLimit: IMPORT_BODY_LIMIT_BYTES,
      schema: {
        summary: 'Import contacts',
        description:
          `Up to ${IMPORT_MAX} contacts, upserted by phone in one transaction. Each row is ` +
          'checked as a create would be: invalid rows are reported in `failed` (0-based ' +
          '`index`, `field`, `message`) and skipped, the valid ones land together. A phone ' +
          'repeated in one request is written from its last row; the earlier rows are ' +
          'reported. Bodies up to 2 MiB.',
        tags: TAGS,
        body: ImportBodySchema,
        response: {
          200: { ...ImportResultSchema, description: 'The counts and the rows that failed.' },
          ...errorResponses(BODY_ERRORS),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await contacts.importContacts(principalOf(request), request.body.contacts, 'import'),
    }),
  );
}
