/**
 * A WABA's message templates:
 *
 * - `GET    /{version}/{waba-id}/message_templates?fields&limit&after` → `{"data": [{id, name,
 *   language, category, status, components}], "paging": {"cursors": {"before", "after"},
 *   "next"?}}` (`next` only when there is a next page; it carries no token); `fields=` picks
 *   fields, `quality_score` (`{score}`, UNKNOWN until rated, cloud-signals.ts) among them.
 * - `POST   /{version}/{waba-id}/message_templates` JSON `{name, language, category,
 *   components: [{type, text?, format?, buttons?, example?}]}` (a HEADER's `format`, a BUTTONS
 *   component's `buttons: [{type, text?, url?, phone_number?}]`: what a send is checked
 *   against) → `{"id", "status": "PENDING", "category"}`. After `templateReviewMs` it becomes
 *   APPROVED (REJECTED when the name contains `reject`) and a `message_template_status_update`
 *   webhook goes to the creating app. The same name and language twice → code 100.
 * - `DELETE /{version}/{waba-id}/message_templates?name=` deletes every language of the name →
 *   `{"success": true}`; an unknown name → code 100.
 *
 * Each needs `whatsapp_business_management` and the WABA among the token's assets (cloud-auth.ts).
 * A malformed request is Graph error 100 (HTTP 400).
 *
 * @see https://developers.facebook.com/docs/graph-api/reference/whats-app-business-account/message_templates
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/webhooks/components
 */
import { randomInt } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { MANAGEMENT, wabaAccess } from './cloud-auth.ts';
import type { SandboxTemplate } from './cloud-state.ts';
import { qualityOf } from './cloud-signals.ts';
import { deliverWithRetries, wabaNotification } from './cloud-webhooks.ts';
import { GraphError, graphError } from './graph-errors.ts';
import type { SandboxState } from './sandbox-state.ts';
import type { SurfaceOptions } from './surface.ts';

const Params = Type.Object({
  version: Type.String({ pattern: '^v[0-9]+\\.[0-9]+$' }),
  wabaId: Type.String({ maxLength: 40 }),
});
const ListQuery = Type.Object({
  fields: Type.Optional(Type.String({ maxLength: 500 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  after: Type.Optional(Type.String({ maxLength: 200 })),
});
const NewTemplate = Type.Object({
  name: Type.String({ pattern: '^[a-z0-9_]{1,512}$' }),
  language: Type.String({ pattern: '^[a-z]{2,3}(_[A-Z]{2})?$' }),
  category: Type.Union(['MARKETING', 'UTILITY', 'AUTHENTICATION'].map((c) => Type.Literal(c))),
  components: Type.Array(
    Type.Object({
      type: Type.Union(['HEADER', 'BODY', 'FOOTER', 'BUTTONS'].map((c) => Type.Literal(c))),
      text: Type.Optional(Type.String({ maxLength: 1024 })),
      // A HEADER's format; a BUTTONS component's buttons (the send checks parameters by them).
      format: Type.Optional(
        Type.Union(['TEXT', 'IMAGE', 'VIDEO', 'DOCUMENT', 'LOCATION'].map((f) => Type.Literal(f))),
      ),
      buttons: Type.Optional(
        Type.Array(
          Type.Object({
            type: Type.Union(
              ['QUICK_REPLY', 'URL', 'PHONE_NUMBER', 'COPY_CODE', 'OTP'].map((b) =>
                Type.Literal(b),
              ),
            ),
            // An OTP button may come without a label (the provider then shows its default).
            text: Type.Optional(Type.String({ minLength: 1, maxLength: 25 })),
            url: Type.Optional(Type.String({ maxLength: 2000 })),
            phone_number: Type.Optional(Type.String({ maxLength: 20 })),
          }),
          { minItems: 1, maxItems: 10 },
        ),
      ),
    }),
    { minItems: 1, maxItems: 10 },
  ),
});
const DeleteQuery = Type.Object({ name: Type.String({ maxLength: 512 }) });

const INVALID = { code: 100, message: '(#100) Invalid parameter' };
const cursor = (i: number) => Buffer.from(String(i)).toString('base64url');

/** The default fields of a template in the listing (`fields=` names others). */
const DEFAULT_FIELDS = ['id', 'name', 'language', 'category', 'status', 'components'];

/** A template as the listing shows it: the wanted fields (`quality_score: {score}` among them). */
function listed(t: SandboxTemplate, wanted = DEFAULT_FIELDS): Record<string, unknown> {
  const { appId: _appId, quality: _quality, ...graph } = t;
  const all: Record<string, unknown> = { ...graph, quality_score: { score: qualityOf(t) } };
  return Object.fromEntries(['id', ...wanted].filter((f) => f in all).map((f) => [f, all[f]]));
}

/** Leave PENDING after the review delay, and tell the creating app. */
function scheduleReview(state: SandboxState, wabaId: string, t: SandboxTemplate): void {
  state.cloud.schedule(state.cloud.options.templateReviewMs, async () => {
    if (t.status !== 'PENDING') return;
    const rejected = t.name.includes('reject');
    t.status = rejected ? 'REJECTED' : 'APPROVED';
    if (!t.appId) return;
    const value = {
      event: t.status,
      message_template_id: Number(t.id),
      message_template_name: t.name,
      message_template_language: t.language,
      reason: rejected ? 'INVALID_FORMAT' : 'NONE',
    };
    await deliverWithRetries(
      state,
      t.appId,
      'message_template_status_update',
      wabaNotification(wabaId, 'message_template_status_update', value, state.now()),
    );
  });
}

/** The message templates surface. */
export async function cloudTemplateRoutes(
  app: FastifyInstance,
  options: SurfaceOptions,
): Promise<void> {
  const { state } = options;
  // A request that fails its schema is Graph's invalid parameter, not Fastify's own error.
  app.setErrorHandler((_err, _request, reply) => graphError(reply, 400, INVALID));
  const path = '/:version/:wabaId/message_templates';
  const response = { 200: Type.Record(Type.String(), Type.Unknown()), '4xx': GraphError };

  app.get(
    path,
    { schema: { params: Params, querystring: ListQuery, response } },
    async (request, reply) => {
      const { wabaId } = request.params as Static<typeof Params>;
      const access = wabaAccess(request, options, wabaId, [MANAGEMENT]);
      if ('fault' in access) return graphError(reply, access.status, access.fault);
      const q = request.query as Static<typeof ListQuery>;
      const from = q.after ? Number(Buffer.from(q.after, 'base64url').toString()) + 1 : 0;
      if (!Number.isInteger(from) || from < 0) return graphError(reply, 400, INVALID);
      const all = state.cloud.templatesOf(wabaId);
      const limit = q.limit ?? 25;
      const wanted = q.fields?.split(',').map((f) => f.trim());
      const data = all.slice(from, from + limit).map((t) => listed(t, wanted));
      const last = from + data.length - 1;
      const more = from + data.length < all.length;
      const { version } = request.params as Static<typeof Params>;
      return {
        data,
        paging: {
          cursors: { before: cursor(from), after: cursor(last) },
          ...(more && {
            next: `/${version}/${wabaId}/message_templates?limit=${limit}&after=${cursor(last)}`,
          }),
        },
      };
    },
  );

  app.post(
    path,
    { schema: { params: Params, body: NewTemplate, response } },
    async (request, reply) => {
      const { wabaId } = request.params as Static<typeof Params>;
      const access = wabaAccess(request, options, wabaId, [MANAGEMENT]);
      if ('fault' in access) return graphError(reply, access.status, access.fault);
      const input = request.body as Static<typeof NewTemplate>;
      const list = state.cloud.templatesOf(wabaId);
      if (list.some((t) => t.name === input.name && t.language === input.language))
        return graphError(reply, 400, {
          code: 100,
          subcode: 2388024,
          message: 'Message template already exists in this language',
        });
      const template: SandboxTemplate = {
        id: `${randomInt(100_000_000, 999_999_999)}${randomInt(100_000, 999_999)}`,
        name: input.name,
        language: input.language,
        category: input.category,
        status: 'PENDING',
        components: input.components,
        appId: access.record.appId,
      };
      list.push(template);
      scheduleReview(state, wabaId, template);
      return { id: template.id, status: template.status, category: template.category };
    },
  );

  app.delete(
    path,
    { schema: { params: Params, querystring: DeleteQuery, response } },
    async (request, reply) => {
      const { wabaId } = request.params as Static<typeof Params>;
      const access = wabaAccess(request, options, wabaId, [MANAGEMENT]);
      if ('fault' in access) return graphError(reply, access.status, access.fault);
      const { name } = request.query as Static<typeof DeleteQuery>;
      const list = state.cloud.templatesOf(wabaId);
      const kept = list.filter((t) => t.name !== name);
      if (kept.length === list.length)
        return graphError(reply, 400, { code: 100, message: 'Message template not found' });
      state.cloud.templates.set(wabaId, kept);
      return { success: true };
    },
  );
}
