/**
 * Sending, `POST /{version}/{phone-number-id}/messages` with a JSON body
 * `{"messaging_product":"whatsapp","recipient_type"?,"to"|"recipient","type","<type>":{…},"context"?:
 * {"message_id"},"biz_opaque_callback_data"?}` for every kind a business sends — `text`,
 * `image`, `video`, `audio`, `document`, `sticker`, `location`, `contacts`, `interactive`,
 * `reaction`, `template` — with `whatsapp_business_messaging` on the number's WABA. Answers
 * `{"messaging_product":"whatsapp","contacts":[{"input","wa_id"}],"messages":[{"id":"wamid.…"}]}`
 * (a template's with `"message_status": "accepted"`) and then POSTs signed status webhooks to the app (cloud-statuses.ts): `sent`, `delivered`,
 * `read` after `statusDelaysMs`, or one `failed`, the synchronous answer still a wamid as the
 * Cloud API does, with 131047 for a free-form kind (anything but a template) to a person who has
 * not written to the number in the 24 hours before (the customer service window, per number and
 * person) and 131026 for a recipient whose number ends in `0000`. The sandbox phone keeps what
 * was sent (phone-page.tsx shows it; a reaction lands on its message). A person is addressed by
 * phone (`to`) or by business-scoped user id (`recipient`, e.g. `US.13491208655302741918`: a
 * person who writes with a username and no phone); exactly one of the two, else 100.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
 *
 * The same path takes read receipts (`status: "read"`, with the typing indicator or not,
 * cloud-read.ts).
 *
 * Refusals (Graph's envelope, HTTP 400): a number not registered → 133010; over `sendsPerSecond` on the number → 130429; the
 * content as the Cloud API checks it (cloud-message-validation.ts, cloud-interactive-validation.ts,
 * cloud-template-validation.ts: 100, 131009, 131051, 131053, 132000, 132001, 132012); a
 * malformed envelope → 100.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/templates/template-pacing
 */
import { stoppedMarketing } from './cloud-standing.ts';
import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { MESSAGING, wabaAccess } from './cloud-auth.ts';
import {
  newWamid,
  wabaOfPhoneNumber,
  type PhoneMessage,
  type SandboxTemplate,
} from './cloud-state.ts';
import { markRead, MarkRead, threadKey } from './cloud-read.ts';
import { interactiveFault } from './cloud-interactive-validation.ts';
import { contentFault, isObject, type Json, type SendParties } from './cloud-message-validation.ts';
import { checkTemplate, type SentTemplate } from './cloud-template-validation.ts';
import { findMessage } from './inbound-message.ts';
import { scheduleStatuses } from './cloud-statuses.ts';
import { pricingFor } from './cloud-pricing.ts';
import { BSUID_PATTERN } from './sandbox-people.ts';
import { GraphError, graphError, type GraphFault } from './graph-errors.ts';
import type { SandboxState } from './sandbox-state.ts';
import type { SurfaceOptions } from './surface.ts';

const Params = Type.Object({
  version: Type.String({ pattern: '^v[0-9]+\\.[0-9]+$' }),
  phoneNumberId: Type.String({ maxLength: 40 }),
});
// The envelope of a send; each kind's object is checked by cloud-message-validation.ts (and the
// interactive and template files), which answer the Cloud API's codes rather than a schema error.
const Send = Type.Object({
  messaging_product: Type.Literal('whatsapp'),
  recipient_type: Type.Optional(Type.Literal('individual')),
  // A phone number as people write it: digits with `+`, spaces, dashes, dots or parentheses.
  to: Type.Optional(Type.String({ pattern: '^[+0-9 ().-]{7,40}$' })),
  // A business-scoped user id (BSUID): the person without their phone number.
  recipient: Type.Optional(Type.String({ pattern: BSUID_PATTERN, maxLength: 135 })),
  type: Type.Optional(Type.String({ maxLength: 40 })),
  context: Type.Optional(Type.Unknown()),
  biz_opaque_callback_data: Type.Optional(Type.String({ maxLength: 512 })),
});
type SendBody = Static<typeof Send> & Json;

const INVALID: GraphFault = { code: 100, message: '(#100) Invalid parameter' };
/**
 * A send from a number that is not registered (`POST /{phone-number-id}/register`).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/support/error-codes/
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-phone-numbers/registration
 */
const UNREGISTERED: GraphFault = {
  code: 133010,
  message: '(#133010) Phone number Not Registered',
  details: 'The phone number is not registered on the WhatsApp Business Platform',
};
/** The Cloud API codes a send accepted at once may still fail with (its `failed` status). */
const RE_ENGAGEMENT = 131047;
const UNDELIVERABLE = 131026;
/**
 * The person stopped marketing messages from the number (`user_preferences`, cloud-standing.ts).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/support/error-codes
 */
const MARKETING_STOPPED = 131050;

/** The content checks of a send; a fault to answer, or the template it renders. */
function check(
  parties: SendParties,
  body: SendBody,
):
  | { fault: GraphFault }
  | { template: { definition: SandboxTemplate; sent: SentTemplate } | undefined } {
  const fault = contentFault(parties, body);
  if (fault) return { fault };
  if (body.type === 'interactive') {
    const interactive = interactiveFault(parties, body.interactive);
    return interactive ? { fault: interactive } : { template: undefined };
  }
  if (body.type !== 'template') return { template: undefined };
  const checked = checkTemplate(parties, body.template);
  return 'fault' in checked ? { fault: checked.fault } : { template: checked };
}

/** What the phone keeps of a business message's content (the kind's object, the quote). */
function keptContent(body: SendBody, type: string): Partial<PhoneMessage> {
  const content = body[type];
  const context = body.context as { message_id?: string } | undefined;
  return {
    ...(type === 'text' && { text: (content as { body: string }).body }),
    ...(type !== 'text' && type !== 'template' && isObject(content) && { content }),
    ...(type === 'contacts' && { content: { contacts: content } }),
    ...(context?.message_id !== undefined && { contextId: context.message_id }),
  };
}

/** A business's reaction lands on the message it reacts to ("" removes it). */
function reactTo(state: SandboxState, message: PhoneMessage): void {
  const { message_id: id, emoji } = message.content as { message_id: string; emoji: string };
  const target = findMessage(state, id);
  if (!target) return;
  if (emoji === '') delete target.businessReaction;
  else target.businessReaction = emoji;
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
        response: {
          200: Type.Record(Type.String(), Type.Unknown()),
          '4xx': GraphError,
          '5xx': GraphError,
        },
      },
    },
    async (request, reply) => {
      const { phoneNumberId } = request.params as Static<typeof Params>;
      const wabaId = wabaOfPhoneNumber(phoneNumberId) ?? '';
      const access = wabaAccess(request, options, wabaId, [MESSAGING]);
      if ('fault' in access) return graphError(reply, access.status, access.fault);
      // A number not registered for the Cloud API sends nothing (cloud-onboarding.ts).
      if (!state.cloud.registered.has(phoneNumberId)) return graphError(reply, 400, UNREGISTERED);
      if ('status' in (request.body as object)) {
        // A read receipt is only what MarkRead allows (the union also admits it as a send).
        const body: unknown = request.body;
        if (!Value.Check(MarkRead, body)) return graphError(reply, 400, INVALID);
        const { message_id: messageId, typing_indicator: typing } = body;
        const fault = markRead(state, phoneNumberId, messageId, typing !== undefined);
        return fault ? graphError(reply, 400, fault) : { success: true };
      }
      // A fault a test set up (CloudState.sendFaults): answered before anything is sent.
      const injected = state.cloud.sendFaults.shift();
      if (injected) return graphError(reply, injected.status, injected.fault);
      if (!state.cloud.admitSend(phoneNumberId, state.now()))
        return graphError(reply, 400, {
          code: 130429,
          message: '(#130429) Rate limit hit',
          details:
            'Message failed to send because there were too many messages sent from this phone number in a short period of time',
        });
      const body = request.body as SendBody;
      // The WhatsApp id is the number's digits (country code first), whatever its formatting;
      // or the BSUID given as `recipient` (the sandbox keys that person by it).
      if ((body.to === undefined) === (body.recipient === undefined))
        return graphError(reply, 400, INVALID);
      const waId = body.recipient ?? body.to!.replace(/[^0-9]/g, '');
      if (body.recipient === undefined && !/^[1-9][0-9]{6,14}$/.test(waId))
        return graphError(reply, 400, INVALID);
      const checked = check({ state, wabaId, phoneNumberId, waId }, body);
      if ('fault' in checked) return graphError(reply, 400, checked.fault);
      const type = body.type ?? 'text';
      state.cloud.countSend(body.biz_opaque_callback_data);
      const now = state.now();
      const category = checked.template?.definition.category.toLowerCase() ?? 'service';
      const failure = waId.endsWith('0000')
        ? UNDELIVERABLE
        : type !== 'template' && !state.cloud.inWindow(phoneNumberId, waId, now)
          ? RE_ENGAGEMENT
          : category === 'marketing' && stoppedMarketing(state, phoneNumberId, waId)
            ? MARKETING_STOPPED
            : undefined;
      const message: PhoneMessage = {
        wamid: newWamid(),
        direction: 'received',
        phoneNumberId,
        waId,
        type,
        ...keptContent(body, type),
        ...(checked.template && {
          template: checked.template.sent.template,
          templateView: checked.template.sent.view,
        }),
        status: 'accepted',
        at: now,
        ...(failure === undefined
          ? { pricing: pricingFor(category, state.cloud.freeEntryPoint(phoneNumberId, waId, now)) }
          : { failure }),
      };
      state.cloud.messages.push(message);
      // The business's message ends the typing indicator it showed (cloud-read.ts).
      state.cloud.typingUntil.delete(threadKey(phoneNumberId, waId));
      if (type === 'reaction' && failure === undefined) reactTo(state, message);
      scheduleStatuses(state, access.record.appId, wabaId, message, body.biz_opaque_callback_data);
      const slow = state.cloud.options.sendAnswerDelayMs;
      if (slow > 0) await delay(slow, undefined, { signal: state.cloud.signal });
      return {
        messaging_product: 'whatsapp',
        contacts: [
          body.recipient === undefined
            ? { input: body.to, wa_id: waId }
            : { input: body.recipient, user_id: body.recipient },
        ],
        // A template's answer says whether Meta sent it or holds it (template pacing): the
        // sandbox paces none, so `accepted`.
        // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/templates/template-pacing
        messages: [
          { id: message.wamid, ...(type === 'template' && { message_status: 'accepted' }) },
        ],
      };
    },
  );
}
