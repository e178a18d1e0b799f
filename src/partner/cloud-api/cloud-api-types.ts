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
  /** e.g. `TIER_1K`; null when Graph does not say. */
  messagingLimitTier: string | null;
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
/** `to`: the recipient's number in E.164, with or without the leading `+`. */
export type OutboundMessage =
  | { to: string; type: 'text'; text: { body: string } }
  | {
      to: string;
      type: 'template';
      template: { name: string; language: { code: string }; components?: unknown[] };
    };
/** One page of a Graph list; `after` is `paging.cursors.after` when there is a next page. */
export interface Page<T> {
  items: T[];
  after: string | null;
}
