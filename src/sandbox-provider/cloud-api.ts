/**
 * The WhatsApp Cloud API nodes of a person's WhatsApp Business Account (WABA): its two phone
 * numbers (`GET /{version}/{waba-id}/phone_numbers`) and its message templates (`GET|POST|DELETE
 * /{version}/{waba-id}/message_templates`). A WABA is an asset id of the token's grant; any other
 * id is Graph's "object does not exist" (100/33). A new template is `PENDING` and, after
 * `state.templateReviewMs` on the sandbox clock, `APPROVED` — or `REJECTED` when its name
 * contains `reject`. Lists page with `paging.cursors.after` as Graph does.
 *
 * @see https://developers.facebook.com/docs/graph-api/reference/whats-app-business-account/phone_numbers
 * @see https://developers.facebook.com/docs/graph-api/reference/whats-app-business-account/message_templates
 */
import { randomInt } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { liveUserToken } from './graph-auth.ts';
import { graphError } from './graph-errors.ts';
import type { SandboxState, SandboxTemplate, TokenRecord } from './sandbox-state.ts';
import type { SurfaceOptions } from './surface.ts';

const Params = Type.Object({
  version: Type.String({ pattern: '^v[0-9]+\\.[0-9]+$' }),
  waba: Type.String({ maxLength: 40 }),
});
const ListQuery = Type.Object(
  {
    fields: Type.Optional(Type.String({ maxLength: 300 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    after: Type.Optional(Type.String({ maxLength: 100 })),
    name: Type.Optional(Type.String({ maxLength: 512 })),
    status: Type.Optional(Type.String({ maxLength: 40 })),
  },
  { additionalProperties: true },
);

/** The two phone numbers of a WABA: ids and numbers derived from the WABA id. */
export function sandboxPhoneNumbers(wabaId: string) {
  const tail = wabaId.slice(-6);
  return [1, 2].map((n) => ({
    id: `10${tail}00${n}`,
    display_phone_number: `+1 555-01${tail.slice(-2)}-000${n}`,
    verified_name: `Sandbox Business ${tail}`,
    quality_rating: n === 1 ? 'GREEN' : 'YELLOW',
    messaging_limit_tier: n === 1 ? 'TIER_1K' : 'TIER_250',
  }));
}

/** A template's status on the sandbox clock. */
export function templateStatus(state: SandboxState, t: SandboxTemplate): string {
  if (state.now() < t.createdAtMs + state.templateReviewMs) return 'PENDING';
  return t.name.includes('reject') ? 'REJECTED' : 'APPROVED';
}

/** The WABA of the request if the live token's grant covers it, else a Graph error sent. */
function wabaOf(
  request: FastifyRequest<{ Params: { waba: string } }>,
  reply: FastifyReply,
  options: SurfaceOptions,
): { record: TokenRecord; wabaId: string } | null {
  const live = liveUserToken(request, options);
  if ('fault' in live) {
    void graphError(reply, 400, live.fault);
    return null;
  }
  const wabaId = request.params.waba;
  if (!live.record.assetIds.includes(wabaId)) {
    void graphError(reply, 400, {
      code: 100,
      subcode: 33,
      message: `Unsupported request. Object with ID '${wabaId}' does not exist or cannot be loaded due to missing permissions.`,
    });
    return null;
  }
  if (!live.record.permissions.includes('whatsapp_business_management')) {
    void graphError(reply, 403, { code: 200, message: 'Permissions error' });
    return null;
  }
  return { record: live.record, wabaId };
}

function page<T>(items: T[], query: { limit?: number; after?: string }) {
  const start = query.after
    ? Number.parseInt(Buffer.from(query.after, 'base64url').toString(), 10) || 0
    : 0;
  const limit = query.limit ?? 25;
  const data = items.slice(start, start + limit);
  const more = start + limit < items.length;
  const cursor = (n: number) => Buffer.from(String(n)).toString('base64url');
  return {
    data,
    paging: {
      cursors: { before: cursor(start), after: cursor(start + data.length) },
      ...(more && { next: `page-after-${start + data.length}` }),
    },
  };
}

/** The Cloud API surface. */
export async function cloudApiRoutes(app: FastifyInstance, options: SurfaceOptions): Promise<void> {
  const { state } = options;
  type Req = { Params: { version: string; waba: string }; Querystring: Record<string, string> };

  app.get<Req>(
    '/:version/:waba/phone_numbers',
    { schema: { params: Params, querystring: ListQuery } },
    async (request, reply) => {
      const found = wabaOf(request, reply, options);
      if (!found) return reply;
      return page(
        sandboxPhoneNumbers(found.wabaId),
        request.query as { limit?: number; after?: string },
      );
    },
  );

  app.get<Req>(
    '/:version/:waba/message_templates',
    { schema: { params: Params, querystring: ListQuery } },
    async (request, reply) => {
      const found = wabaOf(request, reply, options);
      if (!found) return reply;
      const q = request.query as { limit?: number; after?: string; name?: string; status?: string };
      const all = (state.templates.get(found.wabaId) ?? [])
        .map((t) => ({
          id: t.id,
          name: t.name,
          language: t.language,
          category: t.category,
          status: templateStatus(state, t),
          components: t.components,
        }))
        .filter(
          (t) => (!q.name || t.name.includes(q.name)) && (!q.status || t.status === q.status),
        );
      return page(all, q);
    },
  );

  app.post<
    Req & { Body: { name: string; language: string; category: string; components: unknown[] } }
  >(
    '/:version/:waba/message_templates',
    {
      schema: {
        params: Params,
        body: Type.Object(
          {
            name: Type.String({ pattern: '^[a-z0-9_]{1,512}$' }),
            language: Type.String({ minLength: 2, maxLength: 15 }),
            category: Type.Union([
              Type.Literal('MARKETING'),
              Type.Literal('UTILITY'),
              Type.Literal('AUTHENTICATION'),
            ]),
            components: Type.Array(
              Type.Object({ type: Type.String() }, { additionalProperties: true }),
              { minItems: 1 },
            ),
          },
          { additionalProperties: true },
        ),
      },
      attachValidation: true,
    },
    async (request, reply) => {
      const found = wabaOf(request, reply, options);
      if (!found) return reply;
      if (request.validationError)
        return graphError(reply, 400, { code: 100, message: 'Invalid parameter' });
      const list = state.templates.get(found.wabaId) ?? [];
      const { name, language, category, components } = request.body;
      if (list.some((t) => t.name === name && t.language === language))
        return graphError(reply, 400, {
          code: 100,
          subcode: 2388024,
          message: 'Content in this language already exists',
        });
      const id = `${randomInt(100_000, 999_999)}${randomInt(1_000_000_000, 9_999_999_999)}`;
      list.push({ id, name, language, category, components, createdAtMs: state.now() });
      state.templates.set(found.wabaId, list);
      return { id, status: 'PENDING', category };
    },
  );

  app.delete<Req>(
    '/:version/:waba/message_templates',
    { schema: { params: Params, querystring: ListQuery } },
    async (request, reply) => {
      const found = wabaOf(request, reply, options);
      if (!found) return reply;
      const name = (request.query as { name?: string }).name;
      const list = state.templates.get(found.wabaId) ?? [];
      const kept = list.filter((t) => t.name !== name);
      if (!name || kept.length === list.length)
        return graphError(reply, 400, {
          code: 100,
          subcode: 2593002,
          message: 'Message template not found',
        });
      state.templates.set(found.wabaId, kept);
      return { success: true };
    },
  );
}
