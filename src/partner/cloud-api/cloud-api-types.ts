/**
 * The WhatsApp Cloud API's objects as Portico reads them (cloud-api.ts). Names follow Graph's
 * fields in camelCase.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/phone-numbers
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/message-templates
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
 */
export type QualityRating = 'GREEN' | 'YELLOW' | 'RED' | 'NA';
/** A sender number of a WABA. `id` is Graph's phone number id (what `sendMessage` takes). */
export interface PhoneNumber {
  id: string;
  displayPhoneNumber: string;
  verifiedName: string;
  qualityRating: QualityRating;
  /**
   * The business portfolio's messaging limit as Graph names it
   * (`whatsapp_business_manager_messaging_limit`: `TIER_250`, `TIER_2K`, `TIER_10K`,
   * `TIER_100K`, `TIER_UNLIMITED`); null when Graph does not say.
   */
  messagingLimitTier: string | null;
  /**
   * The same limit in people: how many different people the portfolio's numbers together may
   * message outside a customer service window in a moving 24 hours; null for unlimited or not
   * said (`messagingLimitTier` tells which).
   */
  messagingLimitPerDay: number | null;
  /** Messages per second it may send (`throughput.level`: 80 standard, 1,000 high). */
  throughputPerSecond?: number;
  wabaId: string;
}
export type TemplateCategory = 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';
export interface TemplateComponent {
  type: 'HEADER' | 'BODY' | 'FOOTER' | 'BUTTONS';
  format?: string;
  text?: string;
  example?: unknown;
  buttons?: unknown[];
}
export interface MessageTemplate {
  id: string;
  name: string;
  /** e.g. `en_US`. */
  language: string;
  category: TemplateCategory;
  /** APPROVED, PENDING, REJECTED, PAUSED, DISABLED, … (Graph's words, passed on). */
  status: string;
  /** `quality_score.score`: GREEN, YELLOW, RED, or UNKNOWN (not rated yet, or not said). */
  qualityScore: string;
  components: TemplateComponent[];
  wabaId: string;
}
export interface NewTemplate {
  name: string;
  language: string;
  category: TemplateCategory;
  components: TemplateComponent[];
}
/** A medium on the wire: the provider's media id, or a link it downloads from. */
export type WireMedia = { id: string } | { link: string };
/** An interactive message's header on the wire. */
export type WireInteractiveHeader =
  | { type: 'text'; text: string }
  | { type: 'image'; image: WireMedia }
  | { type: 'video'; video: WireMedia }
  | { type: 'document'; document: WireMedia };
/** An interactive message on the wire: reply buttons, a list, or a URL button. */
export type WireInteractive = {
  header?: WireInteractiveHeader;
  body: { text: string };
  footer?: { text: string };
} & (
  | {
      type: 'button';
      action: { buttons: { type: 'reply'; reply: { id: string; title: string } }[] };
    }
  | {
      type: 'list';
      action: {
        button: string;
        sections: {
          title?: string;
          rows: { id: string; title: string; description?: string }[];
        }[];
      };
    }
  | {
      type: 'cta_url';
      action: { name: 'cta_url'; parameters: { display_text: string; url: string } };
    }
);
/** Each message type's object as the Cloud API takes it (snake_case). */
export interface WireObjects {
  text: { body: string; preview_url?: boolean };
  image: WireMedia & { caption?: string };
  video: WireMedia & { caption?: string };
  /** `voice: true`: a voice message (OGG/Opus), not an audio file. */
  audio: WireMedia & { voice?: boolean };
  document: WireMedia & { caption?: string; filename?: string };
  sticker: WireMedia;
  location: { latitude: number; longitude: number; name?: string; address?: string };
  interactive: WireInteractive;
  reaction: { message_id: string; emoji: string };
  template: { name: string; language: { code: string }; components?: unknown[] };
}
/**
 * A message to send: `to`, the recipient's number in E.164 (with or without the leading `+`),
 * its `type` with that type's object, and the wamid of the message it quotes (`context`).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
 */
export type OutboundMessage = {
  [K in keyof WireObjects]: { to: string; type: K; context?: { message_id: string } } & {
    [P in K]: WireObjects[K];
  };
}[keyof WireObjects];
/** One page of a Graph list; `after` is `paging.cursors.after` when there is a next page. */
export interface Page<T> {
  items: T[];
  after: string | null;
}
