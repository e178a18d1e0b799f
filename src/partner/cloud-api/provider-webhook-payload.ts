/**
 * The provider's WhatsApp webhook body, parsed: a pure function from the (already verified)
 * JSON to typed changes per WABA. TypeBox schemas check only what Portico reads and allow every
 * other field (the provider adds fields without notice). An entry, change or item that does not
 * fit is skipped and counted, never fatal: one odd status must not lose the rest of a batch.
 *
 * Body: `{"object":"whatsapp_business_account","entry":[{"id":<WABA id>,"time"?,"changes":[
 * {"field":"messages"|"message_template_status_update"|"account_update","value":{…}}]}]}`.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/components
 * @see https://developers.facebook.com/docs/graph-api/webhooks/reference/whatsapp-business-account
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
 *   (a person who uses a username may come without `from`/`wa_id`/`recipient_id`, named by
 *   `from_user_id`/`user_id`/`recipient_user_id`)
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/system/
 *   (a changed BSUID: a system message with `previous_user_id` and `user_id`)
 */
import { Type, type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { providerErrorTitle } from '../provider-error.ts';
import { parseAccountSignal, type AccountSignalChange } from './provider-account-signals.ts';
import {
  parseInboundContent,
  parseInboundContext,
  parseInboundReferral,
} from './inbound-message-parse.ts';
import type {
  InboundMessageEvent,
  MessageStatusEvent,
  TemplateStatusEvent,
  UserIdChangeEvent,
} from './provider-webhook-events.ts';

/** What one change of one entry asks of Portico. */
export type WebhookChange =
  | { kind: 'statuses'; wabaId: string; phoneNumberId: string; events: MessageStatusEvent[] }
  | { kind: 'inbound'; wabaId: string; phoneNumberId: string; events: InboundMessageEvent[] }
  /** People's BSUIDs changed (system messages `user_changed_user_id` / `user_changed_number`). */
  | { kind: 'user_ids'; wabaId: string; phoneNumberId: string; events: UserIdChangeEvent[] }
  | { kind: 'template'; wabaId: string; event: TemplateStatusEvent }
  | { kind: 'partner_removed'; wabaId: string; time: Date | undefined }
  /** The business shared the WABA with the app (`account_update`, `PARTNER_ADDED`). */
  | { kind: 'partner_added'; wabaId: string }
  | AccountSignalChange;

export type ParsedWebhook =
  | {
      ok: true;
      changes: WebhookChange[];
      skipped: number;
      /** The provider's ids (wamids) of the skipped statuses and messages that carry one. */
      skippedIds: string[];
    }
  | { ok: false; reason: string };

const Id = Type.String({ pattern: '^[0-9]{1,30}$' });
const Timestamp = Type.Union([
  Type.String({ pattern: '^[0-9]{1,12}$' }),
  Type.Integer({ minimum: 0 }),
]);
const Envelope = Type.Object({
  object: Type.Literal('whatsapp_business_account'),
  entry: Type.Array(
    Type.Object({ id: Type.String({ maxLength: 30 }), time: Type.Optional(Type.Integer()) }),
    { maxItems: 1000 },
  ),
});
const Change = Type.Object({ field: Type.String({ maxLength: 100 }), value: Type.Object({}) });
const MessagesValue = Type.Object({
  metadata: Type.Object({ phone_number_id: Id }),
  statuses: Type.Optional(Type.Array(Type.Unknown())),
  messages: Type.Optional(Type.Array(Type.Unknown())),
  contacts: Type.Optional(Type.Array(Type.Unknown())),
});
/** A business-scoped user id (BSUID) or parent BSUID: `US.1349…`, `US.ENT.1181…`. */
const UserId = Type.String({ pattern: '^[A-Z]{2}\\.(ENT\\.)?[A-Za-z0-9]{1,128}$' });
const Status = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 256 }),
  status: Type.Union(['sent', 'delivered', 'read', 'played', 'failed'].map((s) => Type.Literal(s))),
  timestamp: Timestamp,
  recipient_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  recipient_user_id: Type.Optional(UserId),
  biz_opaque_callback_data: Type.Optional(Type.String({ maxLength: 512 })),
  pricing: Type.Optional(
    Type.Object({
      billable: Type.Optional(Type.Boolean()),
      category: Type.Optional(Type.String({ maxLength: 64 })),
      pricing_model: Type.Optional(Type.String({ maxLength: 64 })),
      type: Type.Optional(Type.String({ maxLength: 64 })),
    }),
  ),
  errors: Type.Optional(Type.Array(Type.Object({ code: Type.Integer() }), { maxItems: 20 })),
});
const Inbound = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 256 }),
  from: Type.Optional(Type.String({ pattern: '^[0-9]{1,20}$' })),
  from_user_id: Type.Optional(UserId),
  from_parent_user_id: Type.Optional(UserId),
  timestamp: Timestamp,
  type: Type.String({ minLength: 1, maxLength: 64 }),
});
/** A system message that reports a changed BSUID (the new and previous ids both given). */
const UserIdSystem = Type.Object({
  type: Type.Literal('system'),
  system: Type.Object({
    type: Type.Union([Type.Literal('user_changed_user_id'), Type.Literal('user_changed_number')]),
    previous_user_id: UserId,
    user_id: UserId,
    previous_parent_user_id: Type.Optional(UserId),
    parent_user_id: Type.Optional(UserId),
  }),
});
const Contact = Type.Object({
  wa_id: Type.Optional(Type.String({ maxLength: 64 })),
  user_id: Type.Optional(UserId),
  parent_user_id: Type.Optional(UserId),
  profile: Type.Optional(
    Type.Object({
      name: Type.Optional(Type.String({ maxLength: 256 })),
      username: Type.Optional(Type.String({ maxLength: 256 })),
    }),
  ),
});
const TemplateValue = Type.Object({
  event: Type.String({ minLength: 1, maxLength: 64 }),
  message_template_id: Type.Union([Type.Integer({ minimum: 0 }), Id]),
  message_template_name: Type.String({ minLength: 1, maxLength: 512 }),
  message_template_language: Type.String({ minLength: 1, maxLength: 32 }),
  reason: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
});
const AccountValue = Type.Object({
  event: Type.String({ maxLength: 64 }),
  /** `PARTNER_ADDED`: the WABA shared (its id, the owner business's). */
  waba_info: Type.Optional(Type.Object({ waba_id: Type.Optional(Id) })),
});

/**
 * Each schema's checker, compiled at its first use: a webhook may carry thousands of items, all
 * parsed before it is answered, and a compiled check is many times faster than interpreting the
 * schema for each.
 */
const checkers = new WeakMap<TSchema, { Check(value: unknown): boolean }>();
function is<T extends TSchema>(schema: T, v: unknown): v is Static<T> {
  let checker = checkers.get(schema);
  if (!checker) checkers.set(schema, (checker = Compile(schema)));
  return checker.Check(v);
}
/** The first instant a provider's timestamp may name: 2009-01-01T00:00:00Z (before WhatsApp). */
const FIRST_SECOND = 1_230_768_000;
/**
 * How far ahead of this instance's clock a timestamp may be, in seconds: 36 hours, clock skew
 * with room to spare (the development sandbox can move its own clock a day on).
 */
const AHEAD_S = 129_600;

/**
 * A Unix time in seconds as a Date; null when it is not a time the provider could have meant:
 * before 2009 or more than 36 hours ahead of now (year 9999 would be stored, then break every
 * list that computes with it). The item is then skipped and its id logged.
 */
function date(t: string | number): Date | null {
  const seconds = Number(t);
  return Number.isSafeInteger(seconds) &&
    seconds >= FIRST_SECOND &&
    seconds <= Date.now() / 1000 + AHEAD_S
    ? new Date(seconds * 1000)
    : null;
}

/** The `id` of an item that did not fit, for the log (a bounded string, or nothing). */
function idOf(item: unknown): string[] {
  const id = (item as { id?: unknown } | null)?.id;
  return typeof id === 'string' && id.length <= 256 ? [id] : [];
}

type Parsed = { changes: WebhookChange[]; skipped: number; skippedIds: string[] };

/**
 * Parse a verified webhook body (already `JSON.parse`d).
 *
 * @returns the changes in arrival order and how many parts were skipped; `ok: false` when the
 *   body is not a WhatsApp Business Account notification at all.
 */
export function parseProviderWebhook(body: unknown): ParsedWebhook {
  if (!is(Envelope, body)) return { ok: false, reason: 'not a whatsapp_business_account body' };
  const changes: WebhookChange[] = [];
  const skippedIds: string[] = [];
  let skipped = 0;
  for (const entry of body.entry as unknown[]) {
    const e = entry as { id: string; time?: number; changes?: unknown };
    if (!is(Id, e.id) || !Array.isArray(e.changes)) {
      skipped++;
      continue;
    }
    for (const change of e.changes) {
      const parsed = is(Change, change) ? parseChange(e.id, e.time, change) : null;
      if (parsed === null) skipped++;
      else {
        changes.push(...parsed.changes);
        skipped += parsed.skipped;
        skippedIds.push(...parsed.skippedIds);
      }
    }
  }
  return { ok: true, changes, skipped, skippedIds };
}

/** One change; null when its field is unknown or its value does not fit. */
function parseChange(
  wabaId: string,
  time: number | undefined,
  change: Static<typeof Change>,
): Parsed | null {
  const signal = parseAccountSignal(wabaId, change, time);
  if (signal !== undefined) return signal;
  const { field, value } = change;
  if (field === 'messages') return is(MessagesValue, value) ? messages(wabaId, value) : null;
  if (field === 'message_template_status_update') {
    if (!is(TemplateValue, value)) return null;
    const reason = value.reason ?? undefined;
    const event: TemplateStatusEvent = {
      wabaId,
      templateId: String(value.message_template_id),
      name: value.message_template_name,
      language: value.message_template_language,
      status: value.event,
      ...(reason !== undefined && reason !== 'NONE' && { reason }),
    };
    return { changes: [{ kind: 'template', wabaId, event }], skipped: 0, skippedIds: [] };
  }
  if (field === 'account_update') {
    if (!is(AccountValue, value)) return null;
    // Restrictions, violations and bans are account signals (provider-standing-signals.ts);
    // other account events (reviews, …) concern nothing Portico keeps: acknowledged.
    if (value.event === 'PARTNER_ADDED') {
      // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/account_update
      const shared = value.waba_info?.waba_id ?? wabaId;
      return { changes: [{ kind: 'partner_added', wabaId: shared }], skipped: 0, skippedIds: [] };
    }
    if (value.event !== 'PARTNER_REMOVED') return { changes: [], skipped: 0, skippedIds: [] };
    const at = time === undefined ? undefined : (date(time) ?? undefined);
    return { changes: [{ kind: 'partner_removed', wabaId, time: at }], skipped: 0, skippedIds: [] };
  }
  return null;
}

function messages(wabaId: string, value: Static<typeof MessagesValue>): Parsed {
  const phoneNumberId = value.metadata.phone_number_id;
  const skippedIds: string[] = [];
  let skipped = 0;
  const statuses: MessageStatusEvent[] = [];
  for (const item of value.statuses ?? []) {
    const s = is(Status, item) ? item : null;
    const timestamp = s && date(s.timestamp);
    if (!s || !timestamp) {
      skipped++;
      skippedIds.push(...idOf(item));
      continue;
    }
    statuses.push({
      wamid: s.id,
      // A voice message played: it was read (Portico keeps no separate played state).
      // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status
      status: s.status === 'played' ? 'read' : s.status,
      timestamp,
      ...(s.recipient_id !== undefined && { recipientId: s.recipient_id }),
      ...(s.recipient_user_id !== undefined && { recipientUserId: s.recipient_user_id }),
      ...(s.biz_opaque_callback_data !== undefined && {
        bizOpaqueCallbackData: s.biz_opaque_callback_data,
      }),
      ...(s.pricing && { pricing: pricing(s.pricing) }),
      // Our fixed title per code: the provider's title, message and details may quote input.
      errors: (s.errors ?? []).map((e) => ({
        code: e.code,
        title: providerErrorTitle('other', e.code),
      })),
    });
  }
  // The sender's `contacts[]` entry, by phone (`wa_id`) or by BSUID (`user_id`).
  const people = new Map<string, Static<typeof Contact>>();
  for (const c of value.contacts ?? [])
    if (is(Contact, c)) {
      if (c.wa_id !== undefined) people.set(`p:${c.wa_id}`, c);
      if (c.user_id !== undefined) people.set(`u:${c.user_id}`, c);
    }
  const inbound: InboundMessageEvent[] = [];
  const userIds: UserIdChangeEvent[] = [];
  for (const m of value.messages ?? []) {
    const timestamp = is(Inbound, m) ? date(m.timestamp) : null;
    if (!is(Inbound, m) || timestamp === null) {
      skipped++;
      skippedIds.push(...idOf(m));
      continue;
    }
    if (is(UserIdSystem, m)) {
      const sys = m.system;
      userIds.push({
        wamid: m.id,
        previousUserId: sys.previous_user_id,
        userId: sys.user_id,
        ...(sys.previous_parent_user_id !== undefined && {
          previousParentUserId: sys.previous_parent_user_id,
        }),
        ...(sys.parent_user_id !== undefined && { parentUserId: sys.parent_user_id }),
        timestamp,
      });
      // A BSUID change alone is no message of the person's; a number change is kept as before.
      if (sys.type === 'user_changed_user_id') continue;
    }
    const person =
      (m.from !== undefined ? people.get(`p:${m.from}`) : undefined) ??
      (m.from_user_id !== undefined ? people.get(`u:${m.from_user_id}`) : undefined);
    const waId = m.from ?? person?.wa_id;
    const from = waId !== undefined && /^[0-9]{1,20}$/.test(waId) ? waId : undefined;
    const fromUserId = m.from_user_id ?? person?.user_id;
    // A message names its sender by phone, by BSUID, or both; one with neither is skipped.
    if (from === undefined && fromUserId === undefined) {
      skipped++;
      skippedIds.push(...idOf(m));
      continue;
    }
    const parent = m.from_parent_user_id ?? person?.parent_user_id;
    const profileName = person?.profile?.name;
    const username = person?.profile?.username;
    const context = parseInboundContext(m);
    const referral = parseInboundReferral(m);
    inbound.push({
      wamid: m.id,
      ...(from !== undefined && { from }),
      ...(fromUserId !== undefined && { fromUserId }),
      ...(parent !== undefined && { fromParentUserId: parent }),
      ...(username !== undefined && { username }),
      timestamp,
      type: m.type,
      content: parseInboundContent(m.type, m),
      ...(context !== undefined && { context }),
      ...(referral !== undefined && { referral }),
      ...(profileName !== undefined && { profileName }),
    });
  }
  const changes: WebhookChange[] = [];
  // The new ids first: the batch's messages then find the person under them.
  if (userIds.length > 0)
    changes.push({ kind: 'user_ids', wabaId, phoneNumberId, events: userIds });
  if (statuses.length > 0)
    changes.push({ kind: 'statuses', wabaId, phoneNumberId, events: statuses });
  if (inbound.length > 0) changes.push({ kind: 'inbound', wabaId, phoneNumberId, events: inbound });
  return { changes, skipped, skippedIds };
}

function pricing(p: {
  billable?: boolean;
  category?: string;
  pricing_model?: string;
  type?: string;
}) {
  return {
    ...(p.billable !== undefined && { billable: p.billable }),
    ...(p.category !== undefined && { category: p.category }),
    ...(p.pricing_model !== undefined && { pricingModel: p.pricing_model }),
    ...(p.type !== undefined && { type: p.type }),
  };
}
