/**
 * Sending, `POST /{version}/{phone-number-id}/messages` with a JSON body
 * `{"messaging_product":"whatsapp","to","type":"text","text":{"body"}}` or
 * `"type":"template","template":{"name","language":{"code"},"components"}` (and
 * `biz_opaque_callback_data`), with `whatsapp_business_messaging` on the number's WABA. Answers
 * `{"messaging_product":"whatsapp","contacts":[{"input","wa_id"}],"messages":[{"id":"wamid.…"}]}`
 * and then POSTs signed status webhooks to the app (cloud-statuses.ts): `sent`, `delivered`,
 * `read` after `statusDelaysMs`, or one `failed`, the synchronous answer still a wamid as the
 * Cloud API does, with 131047 for a free-form message (text, media, interactive, …) to a person
 * who has not written to the number in the 24 hours before (the customer service window, per
 * number and person) and 131026 for a recipient whose number ends in `0000`.
 *
 * The same path takes read receipts (`status: "read"`, cloud-read.ts).
 *
 * Refusals (Graph's envelope, HTTP 400): over `sendsPerSecond` on the number → 130429; a
 * template that does not exist in that language or is not APPROVED → 132001; a body parameter
 * count that differs from the template's → 132000; a malformed body → 100.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { Type, type Static, type TLiteral } from 'typebox';
import { MESSAGING, wabaAccess } from './cloud-auth.ts';
import {
  newWamid,
  wabaOfPhoneNumber,
  type PhoneMessage,
  type SandboxTemplate,
} from './cloud-state.ts';
import { markRead, MarkRead } from './cloud-read.ts';
import { scheduleStatuses } from './cloud-statuses.ts';
import { GraphError, graphError, type GraphFault } from './graph-errors.ts';
import type { SandboxState } from './sandbox-state.ts';
import type { SurfaceOptions } from './surface.ts';

const Params = Type.Object({
  version: Type.String({ pattern: '^v[0-9]+\\.[0-9]+$' }),
  phoneNumberId: Type.String({ maxLength: 40 }),
});
/** The types a business may send in the service window, besides templates. */
const FREE_FORM = [
  'text',
  'image',
  'video',
  'audio',
  'document',
  'sticker',
  'location',
  'interactive',
  'reaction',
] as const;
const KindObject = Type.Record(Type.String(), Type.Unknown());
const Send = Type.Object({
  messaging_product: Type.Literal('whatsapp'),
  recipient_type: Type.Optional(Type.Literal('individual')),
  // A phone number as people write it: digits with `+`, spaces, dashes, dots or parentheses.
  to: Type.String({ pattern: '^[+0-9 ().-]{7,40}$' }),
  type: Type.Union([...FREE_FORM, 'template'].map((t) => Type.Literal(t)) as [TLiteral<string>]),
  context: Type.Optional(Type.Object({ message_id: Type.String({ minLength: 1 }) })),
  ...Object.fromEntries(
    FREE_FORM.filter((t) => t !== 'text').map((t) => [t, Type.Optional(KindObject)]),
  ),
  text: Type.Optional(
    Type.Object({
      body: Type.String({ minLength: 1, maxLength: 4096 }),
      preview_url: Type.Optional(Type.Boolean()),
    }),
  ),
  template: Type.Optional(
    Type.Object({
      name: Type.String({ minLength: 1, maxLength: 512 }),
      language: Type.Object({ code: Type.String({ minLength: 2, maxLength: 15 }) }),
      components: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 20 })),
    }),
  ),
  biz_opaque_callback_data: Type.Optional(Type.String({ maxLength: 512 })),
});
type SendBody = Static<typeof Send> & Partial<Record<string, unknown>>;

const INVALID: GraphFault = { code: 100, message: '(#100) Invalid parameter' };
/** The Cloud API codes a send accepted at once may still fail with (its `failed` status). */
const RE_ENGAGEMENT = 131047;
const UNDELIVERABLE = 131026;

/** The text parameters of a template's body component, in order. */
function bodyParams(components: unknown[] | undefined): string[] {
  const body = (components ?? []).find(
    (c) => String((c as { type?: unknown }).type).toLowerCase() === 'body',
  ) as { parameters?: { text?: unknown }[] } | undefined;
  return (body?.parameters ?? []).map((p) => (typeof p.text === 'string' ? p.text : ''));
}

/** How many `{{n}}` variables a template's BODY has. */
function variableCount(t: SandboxTemplate): number {
  const body = t.components.find((c) => c.type === 'BODY');
  const text = typeof body?.text === 'string' ? body.text : '';
  return new Set(text.match(/\{\{[0-9]+\}\}/g) ?? []).size;
}

/** The content checks of a send; a fault to answer, or the template used. */
function check(
  state: SandboxState,
  wabaId: string,
  body: SendBody,
): { fault: GraphFault } | { template: SandboxTemplate | undefined } {
  if (body.type !== 'template')
    return body[body.type] !== undefined ? { template: undefined } : { fault: INVALID };
  if (!body.template) return { fault: INVALID };
  const { name, language } = body.template;
  const template = state.cloud
    .templatesOf(wabaId)
    .find((t) => t.name === name && t.language === language.code && t.status === 'APPROVED');
  if (!template)
    return {
      fault: {
        code: 132001,
        message: 'Template name does not exist in the translation',
        details: `template name (${name}) does not exist in ${language.code}`,
      },
    };
  if (bodyParams(body.template.components).length !== variableCount(template))
    return {
      fault: {
        code: 132000,
        message: 'Number of parameters does not match',
        details: 'Number of parameters does not match the expected number of params',
      },
    };
  return { template };
}

/** The messages surface. */
export async function cloudMessageRoutes(
  app: FastifyInstance,
  options: SurfaceOptions,
): Promise<void> {
  const { state } = options;
  app.setErrorHandler((_err, _request, reply) => graphError(reply, 400, INVALID));
  app.post(
    '/:version/:phoneNumberId/messages',
    {
      schema: {
        params: Params,
        body: Type.Union([Send, MarkRead]),
        response: { 200: Type.Record(Type.String(), Type.Unknown()), '4xx': GraphError },
      },
    },
    async (request, reply) => {
      const { phoneNumberId } = request.params as Static<typeof Params>;
      const wabaId = wabaOfPhoneNumber(phoneNumberId) ?? '';
      const access = wabaAccess(request, options, wabaId, [MESSAGING]);
      if ('fault' in access) return graphError(reply, access.status, access.fault);
      if ('status' in (request.body as object)) {
        const { message_id: messageId } = request.body as Static<typeof MarkRead>;
        const fault = markRead(state, phoneNumberId, messageId);
        return fault ? graphError(reply, 400, fault) : { success: true };
      }
      if (!state.cloud.admitSend(phoneNumberId, state.now()))
        return graphError(reply, 400, {
          code: 130429,
          message: '(#130429) Rate limit hit',
          details:
            'Message failed to send because there were too many messages sent from this phone number in a short period of time',
        });
      const body = request.body as SendBody;
      // The WhatsApp id is the number's digits (country code first), whatever its formatting.
      const waId = body.to.replace(/[^0-9]/g, '');
      if (!/^[1-9][0-9]{6,14}$/.test(waId)) return graphError(reply, 400, INVALID);
      const checked = check(state, wabaId, body);
      if ('fault' in checked) return graphError(reply, 400, checked.fault);
      state.cloud.countSend(body.biz_opaque_callback_data);
      const now = state.now();
      const failure = waId.endsWith('0000')
        ? UNDELIVERABLE
        : body.type !== 'template' && !state.cloud.inWindow(phoneNumberId, waId, now)
          ? RE_ENGAGEMENT
          : undefined;
      const category = checked.template?.category.toLowerCase() ?? 'service';
      const message: PhoneMessage = {
        wamid: newWamid(),
        direction: 'received',
        phoneNumberId,
        waId,
        type: body.type,
        ...(body.text && { text: body.text.body }),
        ...(body.type !== 'template' && { content: body[body.type] as Record<string, unknown> }),
        ...(body.context && { contextId: body.context.message_id }),
        ...(checked.template &&
          body.template && {
            template: {
              name: checked.template.name,
              language: checked.template.language,
              params: bodyParams(body.template.components),
            },
          }),
        status: 'accepted',
        at: now,
        ...(failure === undefined
          ? { conversation: state.cloud.conversationFor(phoneNumberId, waId, category, now) }
          : { failure }),
      };
      state.cloud.messages.push(message);
      scheduleStatuses(state, access.record.appId, wabaId, message, body.biz_opaque_callback_data);
      const slow = state.cloud.options.sendAnswerDelayMs;
      if (slow > 0) await delay(slow, undefined, { signal: state.cloud.signal });
      return {
        messaging_product: 'whatsapp',
        contacts: [{ input: body.to, wa_id: waId }],
        messages: [{ id: message.wamid }],
      };
    },
  );
}
