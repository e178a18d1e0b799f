/**
 * The typed events the provider's WhatsApp webhooks carry, as the receiver
 * (provider-webhooks-routes.ts) hands them on, and the sink that takes them. Messaging implements
 * the sink; partner/ never imports messaging, so the sink is a plugin option.
 *
 * Duplicates and any order of arrival are normal (the provider retries; statuses race): a sink
 * must be idempotent and must never let a status go backwards.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/components
 * @see docs/partner-connection.md "WhatsApp Cloud API"
 */

/** One entry of `statuses[]`: what happened to a message Portico sent. */
export interface MessageStatusEvent {
  /** The message's id at the provider (`wamid.…`), as `sendMessage` returned it. */
  wamid: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  /** When the provider says it happened (`timestamp`, Unix seconds). */
  timestamp: Date;
  /**
   * The recipient's phone number (`recipient_id`, digits); absent for a person the provider
   * names only by their business-scoped user id (`recipient_user_id`).
   * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
   */
  recipientId?: string;
  /** The recipient's BSUID (`recipient_user_id`), when given. */
  recipientUserId?: string;
  /** What the send gave as `biz_opaque_callback_data` (Portico's message id). */
  bizOpaqueCallbackData?: string;
  /**
   * How the provider bills the message (`pricing`, camelCased): `billable`, `category` (lower
   * case, e.g. `utility`), `pricingModel` (`PMP`) and `type` (`regular`,
   * `free_customer_service`, `free_entry_point`).
   *
   * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status/
   */
  pricing?: { billable?: boolean; category?: string; pricingModel?: string; type?: string };
  /** For `failed`: Graph code and our fixed title for it (never the provider's details). */
  errors: { code: number; title: string }[];
}

/** Media kinds of inbound messages; each carries the provider's media object. */
export const INBOUND_MEDIA_TYPES = ['image', 'audio', 'video', 'document', 'sticker'] as const;
export type InboundMediaType = (typeof INBOUND_MEDIA_TYPES)[number];

/** An inbound medium as the webhook describes it (the bytes stay at the provider). */
export interface InboundMedia {
  /** The provider's media id (for `GET /{media-id}`). */
  providerMediaId: string;
  mimeType: string;
  /** Lower-case hex SHA-256 of the bytes (the webhook gives base64), when given. */
  sha256?: string;
  caption?: string;
  /** A document's file name, as the person's phone named it (untrusted). */
  filename?: string;
  /** A sticker: animated or not. */
  animated?: boolean;
  /**
   * An `audio`: a voice message recorded in WhatsApp (`voice: true`), not an audio file.
   *
   * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/audio
   */
  voice?: boolean;
}

/**
 * The `referral` of a message a person sent from a click-to-WhatsApp ad or a post (Meta's
 * `source_url`, `source_id`, `source_type`, …, camelCased), on the first message after the tap.
 * Every field is optional: Meta leaves out what the ad does not have.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text
 */
export interface InboundReferral {
  /** The ad's or post's URL. */
  sourceUrl?: string;
  /** The ad's or post's id. */
  sourceId?: string;
  /** `ad` or `post`. */
  sourceType?: string;
  headline?: string;
  body?: string;
  /** `image` or `video`. */
  mediaType?: string;
  imageUrl?: string;
  videoUrl?: string;
  thumbnailUrl?: string;
  /** The click id (for Meta's Conversions API). */
  ctwaClid?: string;
  /** The greeting the ad showed the person, when it had one. */
  welcomeMessage?: { text?: string };
}

/** A contact card the person shared (`contacts[]` of a `contacts` message), camelCased. */
export interface SharedContact {
  name: { formattedName: string; firstName?: string; lastName?: string };
  phones?: { phone?: string; waId?: string; type?: string }[];
  emails?: { email?: string; type?: string }[];
  org?: { company?: string; department?: string; title?: string };
  urls?: { url?: string; type?: string }[];
}

/**
 * What one inbound message says, by type: the Cloud API's object for that type, camelCased,
 * with `media` for the five media types. A type Portico does not know (or the provider's
 * `unsupported`) is kept as `unsupported` with the provider's type and error codes.
 */
export type InboundContent =
  | { type: 'text'; text: { body: string } }
  | { type: InboundMediaType; media: InboundMedia }
  | {
      type: 'location';
      location: {
        latitude: number;
        longitude: number;
        name?: string;
        address?: string;
        url?: string;
      };
    }
  | { type: 'contacts'; contacts: SharedContact[] }
  | {
      type: 'interactive';
      interactive:
        | { type: 'button_reply'; buttonReply: { id: string; title: string } }
        | { type: 'list_reply'; listReply: { id: string; title: string; description?: string } };
    }
  /** A template's quick-reply button tapped. */
  | { type: 'button'; button: { payload: string; text: string } }
  /** `emoji` empty: the person removed their reaction. */
  | { type: 'reaction'; reaction: { providerMessageId: string; emoji: string } }
  | {
      type: 'unsupported';
      unsupported: { providerType: string; errors: { code: number; title: string }[] };
    };

/** One entry of `messages[]`: a message a person sent to a business number. */
export interface InboundMessageEvent {
  wamid: string;
  /**
   * The sender's phone number (`from`: digits, no `+`); absent when the person uses a WhatsApp
   * username and the provider withholds their number (then `fromUserId` names them).
   */
  from?: string;
  /**
   * The sender's business-scoped user id (`from_user_id`, else `contacts[].user_id`), e.g.
   * `US.13491208655302741918`; the parent BSUID (`from_parent_user_id` / `parent_user_id`) of a
   * managed business; the username (`contacts[].profile.username`). At least one of `from` and
   * `fromUserId` is present.
   * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
   */
  fromUserId?: string;
  fromParentUserId?: string;
  username?: string;
  timestamp: Date;
  /** The provider's `type` as received (`text`, `image`, `order`, …). */
  type: string;
  content: InboundContent;
  /**
   * `context`: the message this one replies to (a wamid), and whether it was forwarded
   * (`forwarded`) or forwarded more than five times (`frequentlyForwarded`).
   */
  context?: {
    providerMessageId?: string;
    from?: string;
    forwarded?: boolean;
    frequentlyForwarded?: boolean;
  };
  /** `referral`: the click-to-WhatsApp ad or post the person came from. */
  referral?: InboundReferral;
  /** The sender's WhatsApp profile name (`contacts[].profile.name`), when given. */
  profileName?: string;
}

/** A `message_template_status_update`: the review of a template ended (or its state changed). */
export interface TemplateStatusEvent {
  wabaId: string;
  templateId: string;
  name: string;
  language: string;
  /** `event`: APPROVED, REJECTED, PAUSED, DISABLED, … */
  status: string;
  /** The provider's reason code (e.g. `INVALID_FORMAT`), when it is not `NONE`. */
  reason?: string;
}

/**
 * A `phone_number_quality_update`: a business number was flagged or unflagged for its quality,
 * or its messaging limit tier or throughput changed. The provider names the number by its display
 * number only.
 */
export interface PhoneNumberQualityEvent {
  wabaId: string;
  /** The number as the webhook gives it, digits only (e.g. `15550783881`). */
  displayPhoneNumber: string;
  /** `FLAGGED`, `UNFLAGGED`, `UPGRADE`, `DOWNGRADE`, `ONBOARDING`, `THROUGHPUT_UPGRADE`, … */
  event: string;
  /** `current_limit` (`TIER_250`, `TIER_1K`, …, `TIER_UNLIMITED`), when given. */
  messagingLimitTier?: string;
  /** `old_limit`, for a tier change. */
  previousMessagingLimitTier?: string;
}

/** A `message_template_quality_update`: a template's quality score changed. */
export interface TemplateQualityEvent {
  wabaId: string;
  templateId: string;
  name: string;
  language: string;
  /** `GREEN`, `YELLOW`, `RED`, `UNKNOWN`. */
  qualityScore: string;
  previousQualityScore: string;
}

/**
 * A `template_category_update`: the provider moved a template to another category, or will on
 * `effectiveAt` (an impending change names the category it moves to as `correct_category`).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/template_category_update
 */
export interface TemplateCategoryEvent {
  wabaId: string;
  templateId: string;
  name: string;
  language: string;
  /** The category before (`MARKETING`, `UTILITY`, `AUTHENTICATION`), when the provider says. */
  previousCategory: string | null;
  /** The category it has from `effectiveAt` on. */
  category: string;
  /** When the new category applies: `category_update_timestamp`, else the notification's time. */
  effectiveAt: Date;
  /** Announced ahead (impending), or done. */
  impending: boolean;
}

/**
 * One `user_preferences[]` item: a person stopped or resumed marketing messages from a business
 * number.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/user_preferences
 */
export interface UserPreferenceEvent {
  wabaId: string;
  /** The business number (`metadata.phone_number_id`). */
  phoneNumberId: string;
  /** The person's WhatsApp id (digits). */
  waId: string;
  /** `contacts[].profile.name`, when given. */
  profileName?: string;
  preference: 'stop' | 'resume';
  timestamp: Date;
}

/**
 * A person's business-scoped user id changed (a `messages[]` system message of type
 * `user_changed_user_id`, or `user_changed_number`, which regenerates the BSUID too): the
 * previous BSUID and the new one (`system.previous_user_id`, `system.user_id`), with the parent
 * BSUIDs of a managed business when given. No contact data beyond the ids.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/system/
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/changelog/
 *   (`user_id_update` is not a subscribable field: BSUID changes come as these system messages)
 */
export interface UserIdChangeEvent {
  /** The system message's id (a wamid). */
  wamid: string;
  previousUserId: string;
  userId: string;
  previousParentUserId?: string;
  parentUserId?: string;
  timestamp: Date;
}

/**
 * A signal about the standing of a WABA, its business portfolio or a number: `account_alerts`,
 * an `account_update` restriction, violation or ban, `business_capability_update`,
 * `phone_number_name_update`. `details` holds the provider's codes and limits, camelCased.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/account_alerts
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/account_update
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/business_capability_update
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/phone_number_name_update
 */
export interface AccountStandingEvent {
  wabaId: string;
  field:
    'account_alerts' | 'account_update' | 'business_capability_update' | 'phone_number_name_update';
  /** The provider's word: the alert type, the `account_update` event, the name decision, … */
  event: string;
  severity: 'critical' | 'warning' | 'info';
  details: Record<string, unknown>;
  /** When it stops applying (a restriction's expiration), when the provider says. */
  expiresAt?: Date;
  /** For a number's signal: its display number, digits only. */
  displayPhoneNumber?: string;
}

/**
 * Where the receiver hands verified, routed events. Each call is awaited before the provider
 * gets its 200 (DB writes only: never a provider call inside).
 */
export interface ProviderWebhookSink {
  /** Apply a change's statuses, in the order sent, before resolving. */
  messageStatuses(
    portalId: number,
    phoneNumberId: string,
    events: MessageStatusEvent[],
  ): Promise<void>;
  /**
   * Store a change's statuses durably and apply them after the answer (the receiver calls it
   * instead of `messageStatuses` when the sink has it): resolves once they are stored, so the
   * answer's time does not grow with their number. Rejects when they could not be stored (the
   * provider then sends the webhook again).
   */
  queueStatuses?(
    portalId: number,
    phoneNumberId: string,
    events: MessageStatusEvent[],
  ): Promise<void>;
  inboundMessages(
    portalId: number,
    phoneNumberId: string,
    events: InboundMessageEvent[],
  ): Promise<void>;
  templateStatusUpdated(portalId: number, event: TemplateStatusEvent): Promise<void>;
  /** Account signals; a sink without them acknowledges them and does nothing. */
  phoneNumberQualityUpdated?(portalId: number, event: PhoneNumberQualityEvent): Promise<void>;
  templateQualityUpdated?(portalId: number, event: TemplateQualityEvent): Promise<void>;
  templateCategoryChanged?(portalId: number, event: TemplateCategoryEvent): Promise<void>;
  userPreferencesChanged?(portalId: number, events: UserPreferenceEvent[]): Promise<void>;
  /** People's BSUIDs changed: each contact keeps one identity (messaging's sink). */
  userIdsChanged?(portalId: number, events: UserIdChangeEvent[]): Promise<void>;
  accountStanding?(portalId: number, event: AccountStandingEvent): Promise<void>;
}

/**
 * The sink until messaging exists: it drops every event, on purpose and by name (the webhooks
 * are still verified, routed and answered, and `PARTNER_REMOVED` still revokes). Replaced by
 * messaging's sink in app.ts.
 */
export const IGNORE_MESSAGING_EVENTS: ProviderWebhookSink = {
  messageStatuses: async () => {},
  inboundMessages: async () => {},
  templateStatusUpdated: async () => {},
  phoneNumberQualityUpdated: async () => {},
  templateQualityUpdated: async () => {},
  templateCategoryChanged: async () => {},
  userPreferencesChanged: async () => {},
  userIdsChanged: async () => {},
  accountStanding: async () => {},
};
