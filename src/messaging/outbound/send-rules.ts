/**
 * The checks a send passes before anything is queued, in the documented order (docs/messaging.md
 * "Sending"): the input's shape and recipient (400/404), an active connection (409
 * `not_connected`), the sender number (400) and its onboarding (409 `number_not_ready`), consent (422 `recipient_opted_out`), the 24-hour
 * service window for free-form kinds (422 `outside_service_window`) and their media and
 * quoted or reacted-to messages (send-kinds.ts), the template's approval (422
 * `template_not_approved`), a marketing template to a person who stopped marketing from the
 * sender number (422 `marketing_stopped`; the category is the provider's newest once it applies,
 * account-standing.ts) and its parameters against its definition (422
 * `invalid_template_parameters`, template-send-check.ts). Credit (402) and then the portfolio's
 * messaging limit for a business-initiated template (429 `messaging_limit_reached`,
 * messaging-limit.ts) are checked last, the limit inside the send's transaction.
 *
 * @see https://developers.facebook.com/docs/whatsapp/pricing#customer-service-windows
 * @see docs/messaging.md "Sending"
 */
import { findContactBy, type ContactRow } from '../../contacts/contacts-repository.ts';
import { normalisePhone } from '../../contacts/phone.ts';
import { stoppedMarketing } from '../../contacts/marketing-preferences.ts';
import { isWaUserId } from '../../contacts/wa-user-id.ts';
import type { Database } from '../../db/client.ts';
import type { MESSAGE_TYPES, TEMPLATE_CATEGORIES } from '../../db/schema/messages.ts';
import { AppError } from '../../platform/errors.ts';
import type { SendMessageBody } from '../store/send-kinds-schemas.ts';
import type { PhoneNumber, ProviderAdapter } from '../provider/provider-adapter.ts';
import { senderOf } from '../provider/sender-number.ts';
import type { OutboundContent } from '../store/message-content.ts';
import { checkKind } from './send-kinds.ts';
import { findTargetMessage } from '../store/message-targets.ts';
import { findServiceWindow } from '../store/service-window.ts';
import { findSendableMedium } from '../media/outbound-media.ts';
import { checkTemplateSend } from './template-send-check.ts';
import type { AcceptedTemplate } from '../templates/template-send.ts';
import { categoryAt } from '../provider-webhooks/account-standing.ts';
import type { BusinessInitiated } from './messaging-limit.ts';

type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];

/** A send that passed every check but credit: what the message row is made of. */
export interface CheckedSend {
  to: string;
  contactId: string | null;
  from: string;
  type: (typeof MESSAGE_TYPES)[number];
  /** What it says, to seal in its row (message-content.ts); null for a template without any. */
  content: OutboundContent | null;
  template: { name: string; language: string; category: TemplateCategory } | null;
  /**
   * A template to a person whose service window with the sender number is closed, when the
   * portfolio's messaging limit is a number (null for `TIER_UNLIMITED`, an unknown tier, or a
   * send inside a window): checked in the send's transaction (messaging-limit.ts).
   */
  businessInitiated: BusinessInitiated | null;
}

const invalid = (field: string, message: string, text = `\`${field}\` ${message}.`) =>
  new AppError('invalid_request', text, { details: [{ field: `body.${field}`, message }] });

/** What the checks read from the provider (cached per portal). */
export type SendRulesProvider = Pick<ProviderAdapter, 'catalog'>;

async function recipientOf(
  db: Database,
  portalId: number,
  input: SendMessageBody,
): Promise<{ to: string; contact: ContactRow | null }> {
  if ((input.to === undefined) === (input.contactId === undefined)) {
    throw invalid(
      'to',
      'give exactly one of `to` and `contactId`',
      'Give exactly one of `to` (an E.164 phone or a WhatsApp user id) and `contactId`.',
    );
  }
  if (input.contactId !== undefined) {
    const contact = await findContactBy(db, portalId, { id: input.contactId });
    if (!contact) throw new AppError('not_found', 'No contact with this id.');
    // The phone when known (the provider's own preference), else the BSUID.
    return { to: (contact.phone ?? contact.waUserId)!, contact };
  }
  // A business-scoped user id: the person as the provider named them (docs/decisions/0055).
  if (isWaUserId(input.to!)) {
    const contact = await findContactBy(db, portalId, { waUserId: input.to! });
    return { to: contact?.phone ?? input.to!, contact };
  }
  const phone = normalisePhone(input.to!);
  if (!phone.ok) {
    // A number that wrote in (a contact as the provider gave it) is answered as it wrote, even
    // when the phone library does not know its range yet.
    const digits = input.to!.replace(/[\s().-]/g, '').replace(/^\+/, '');
    const wrote = /^[1-9][0-9]{6,14}$/.test(digits)
      ? await findContactBy(db, portalId, { phone: `+${digits}` })
      : null;
    if (wrote) return { to: `+${digits}`, contact: wrote };
    throw invalid('to', phone.message);
  }
  return { to: phone.e164, contact: await findContactBy(db, portalId, { phone: phone.e164 }) };
}

/** A template's content: its parameters as checked, and the message it quotes. */
function templateContent(
  accepted: AcceptedTemplate,
  context: { messageId: string } | undefined,
): OutboundContent | null {
  const given = accepted.parameters.length > 0 || accepted.components !== undefined;
  if (!given && !context) return null;
  return {
    ...(given && { template: accepted }),
    ...(context && { context: { messageId: context.messageId } }),
  };
}

/**
 * Refuse a sender number whose onboarding is not done, saying what is missing: a number sends
 * only once Portico's app is subscribed to its WABA's webhooks (else no status would come back)
 * and it is registered for the Cloud API (else the provider refuses the send).
 *
 * @throws AppError `number_not_ready` (409)
 * @see docs/partner-connection.md "Onboarding"
 */
function assertReady(sender: Pick<PhoneNumber, 'id' | 'onboarding'>): void {
  const { onboarding } = sender;
  const missing = [
    ...(onboarding.webhooksSubscribed
      ? []
      : ['its WhatsApp account is not subscribed to webhooks']),
    ...(onboarding.registered ? [] : ['it is not registered for the Cloud API']),
  ];
  if (missing.length === 0) return;
  const next = onboarding.nextAttemptAt
    ? ` The provider allows the next registration attempt at ${onboarding.nextAttemptAt}.`
    : '';
  const error = onboarding.lastError ? ` Last error: ${onboarding.lastError}` : '';
  throw new AppError(
    'number_not_ready',
    `The sender number ${sender.id} cannot send yet: ${missing.join(' and ')}. Retry the ` +
      `onboarding on the settings page.${next}${error}`,
  );
}

/**
 * Run every check but credit.
 *
 * @throws AppError as listed in the module comment, and `provider_error` (502) or
 *   `provider_timeout` (504) when the provider cannot be read.
 */
export async function checkSend(deps: {
  db: Database;
  provider: SendRulesProvider;
  portalId: number;
  input: SendMessageBody;
  now: Date;
  /** The confirmation of an opt-out keyword: the one text sent to a person just opted out. */
  optOutConfirmation?: boolean | undefined;
}): Promise<CheckedSend> {
  const { db, provider, portalId, input } = deps;
  const { to, contact } = await recipientOf(db, portalId, input);
  // Refuses a portal with no active connection (409 `not_connected`) before reading numbers.
  const catalog = await provider.catalog(portalId);
  const sender = senderOf(catalog.numbers, input.from);
  assertReady(sender);
  const from = sender.id;
  if (contact?.consentWhatsapp === 'opted_out' && !deps.optOutConfirmation)
    throw new AppError('recipient_opted_out', 'The recipient opted out of WhatsApp messages.');
  const base = { to, contactId: contact?.id ?? null, from };
  const conversation = { portalId, phone: to, phoneNumberId: from };
  if (input.type !== 'template') {
    // The window is between the person and one business phone number: the sender's.
    const open =
      contact !== null &&
      (
        await findServiceWindow(db, {
          portalId,
          contactId: contact.id,
          phoneNumberId: from,
          now: deps.now,
        })
      ).open;
    if (!open)
      throw new AppError(
        'outside_service_window',
        `The recipient has not written to this sender number in the last 24 hours, so a ` +
          `free-form message (${input.type}) cannot be sent; send an approved template instead.`,
      );
    const content = await checkKind(db, conversation, input);
    return { ...base, type: input.type, content, template: null, businessInitiated: null };
  }
  if (input.context && !(await findTargetMessage(db, conversation, input.context.messageId)))
    throw new AppError(
      'not_found',
      'No message with the id given in `context.messageId` in this conversation.',
    );
  const wanted = input.template;
  const templates = await catalog.templates();
  // A template belongs to one WABA: only the sender number's own can be sent, priced by its
  // category there (the same name may be another category in another WABA of the grant).
  const template = templates.find(
    (t) =>
      t.wabaId === sender.wabaId &&
      t.name === wanted.name &&
      t.language === wanted.language &&
      t.status === 'APPROVED',
  );
  if (!template)
    throw new AppError(
      'template_not_approved',
      `The template "${wanted.name}" (${wanted.language}) is not approved in the WABA of ` +
        'the sender number; check GET /messaging/templates.',
    );
  // Priced at the category the provider moved it to, from the day that applies.
  const category = await categoryAt(db, portalId, template, deps.now);
  // The provider sends authentication templates to phone numbers only.
  // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
  if (category === 'AUTHENTICATION' && isWaUserId(to))
    throw new AppError(
      'recipient_needs_phone',
      'An authentication template can only be sent to a phone number; this recipient is ' +
        'known only by their WhatsApp user id.',
    );
  if (
    category === 'MARKETING' &&
    contact !== null &&
    (await stoppedMarketing(db, portalId, contact.id, from))
  )
    throw new AppError(
      'marketing_stopped',
      'The recipient stopped marketing messages from this sender number in WhatsApp; send a ' +
        'utility or authentication template, or wait until they resume.',
    );
  // Kinds and counts against the definition (422 `invalid_template_parameters`).
  const accepted = await checkTemplateSend({
    components: template.components,
    send: wanted,
    from,
    findMedium: (id) => findSendableMedium(db, portalId, id),
  });
  // Business-initiated when the person's window with the sender number is closed: it counts
  // toward the portfolio's messaging limit (unlimited: no count).
  // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messaging-limits
  const limit = sender.messagingLimitPerDay;
  const windowOpen =
    limit !== null &&
    contact !== null &&
    (
      await findServiceWindow(db, {
        portalId,
        contactId: contact.id,
        phoneNumberId: from,
        now: deps.now,
      })
    ).open;
  return {
    ...base,
    type: 'template',
    content: templateContent(accepted, input.context),
    template: { name: template.name, language: template.language, category },
    businessInitiated: limit !== null && !windowOpen ? { to, limit } : null,
  };
}
