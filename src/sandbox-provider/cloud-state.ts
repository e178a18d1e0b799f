/**
 * The sandbox's WhatsApp Cloud API memory: each sandbox person's WhatsApp Business Accounts
 * (the WABA ids of their grant, `SandboxState.assetIdsFor`) with two phone numbers each, the
 * templates of each WABA, the messages each recipient received, who wrote in when (the 24-hour
 * customer service window), sends per `biz_opaque_callback_data` (to count duplicates) and
 * the per-number send rate. Timers of pending status changes are kept so `close()` ends them all.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/overview
 */
import { setMaxListeners } from 'node:events';
import { randomBytes, randomInt } from 'node:crypto';
import type { CloudPricing } from './cloud-pricing.ts';
import { MediaStore } from './cloud-media-store.ts';
import { sampleTemplates } from './sample-templates.ts';

/** How the emulated Cloud API paces itself (tests shorten the delays). */
export interface CloudOptions {
  /** Delay before a new template leaves PENDING (APPROVED, or REJECTED), in ms. */
  templateReviewMs: number;
  /** Delays from the send to the `sent`, `delivered`, `read` webhooks, in ms. */
  statusDelaysMs: [number, number, number];
  /** Sends accepted per phone number per second; the next gets 130429. */
  sendsPerSecond: number;
  /** Delay between accepting a send and answering it, in ms (a slow provider; 0 by default). */
  sendAnswerDelayMs: number;
  /** How long a media download URL from `GET /{media-id}` works, in ms (5 minutes). */
  mediaUrlTtlMs: number;
  /** Seed each WABA with the rich sample templates too (sample-templates.ts; development). */
  sampleTemplates?: boolean;
}

export const DEFAULT_CLOUD_OPTIONS: CloudOptions = {
  templateReviewMs: 3_000,
  statusDelaysMs: [200, 400, 600],
  sendsPerSecond: 80,
  sendAnswerDelayMs: 0,
  mediaUrlTtlMs: 5 * 60 * 1000,
};

export interface SandboxTemplate {
  id: string;
  name: string;
  language: string;
  category: 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';
  status: string;
  components: Record<string, unknown>[];
  /** The app whose token created it: where its status webhooks go. */
  appId: string | undefined;
  /** Its quality score (`quality_score.score` in Graph's listing); GREEN unless changed. */
  quality?: QualityRating;
}

/** A phone number's or a template's quality rating. */
export type QualityRating = 'GREEN' | 'YELLOW' | 'RED' | 'UNKNOWN';

/** What the account signals changed on a phone number (over `describePhoneNumber`). */
export interface NumberSignals {
  quality_rating?: QualityRating;
}

/** A message in the sandbox phone: sent by a business to a recipient, or written in. */
export interface PhoneMessage {
  wamid: string;
  direction: 'received' | 'sent_by_person';
  phoneNumberId: string;
  /** The person's number (digits). */
  waId: string;
  type: string;
  text?: string;
  template?: { name: string; language: string; params: string[] };
  /** What the phone shows of a template as sent: its header, body, footer and buttons. */
  templateView?: {
    /** The header as sent: its text (parameters filled in), or its medium. */
    header?: { text?: string; media?: { type: string; id?: string; link?: string } };
    /** The body text with its parameters filled in. */
    body?: string;
    footer?: string;
    /** The template's buttons: type, label, the URL with its suffix, a quick reply's payload. */
    buttons?: { type: string; text: string; url?: string; payload?: string }[];
  };
  /** A business message's kind object as the send carried it (`body[type]`: image, interactive…). */
  content?: Record<string, unknown>;
  /** The wamid a business message quotes (`context.message_id` of the send). */
  contextId?: string;
  /** `played`: a voice message the person played (after `read`). */
  status: 'accepted' | 'sent' | 'delivered' | 'read' | 'played' | 'failed';
  at: number;
  /** How the provider bills it, as its statuses carry it (none for a message that fails). */
  pricing?: CloudPricing;
  /** The Cloud API error code it fails with (its one status webhook is `failed`). */
  failure?: number;
  /** A message a person wrote: the `messages[]` item its webhook carried (cloud-inbound.ts). */
  inbound?: Record<string, unknown>;
  /** When the business marked a person's message read (`status: "read"`), sandbox clock ms. */
  readAt?: number;
  /** The person's reaction to a message they received (an emoji), if any. */
  reaction?: string;
  /** The business's reaction to a message the person wrote (an emoji), if any. */
  businessReaction?: string;
}

/** A customer service window lasts 24 hours. */
const DAY_MS = 24 * 3600 * 1000;

/** A free entry point window lasts 72 hours. */
const FREE_ENTRY_POINT_MS = 3 * DAY_MS;

/** The provider's own sample template, as its API lists it. */
const HELLO_WORLD: Record<string, unknown>[] = [
  { type: 'HEADER', format: 'TEXT', text: 'Hello World' },
  {
    type: 'BODY',
    text:
      'Welcome and congratulations!! This message demonstrates your ability to send a WhatsApp ' +
      'message notification from the Cloud API, hosted by Meta. Thank you for taking the time ' +
      'to test with us.',
  },
  { type: 'FOOTER', text: 'WhatsApp Business Platform sample message' },
];

const WABA_ID = /^1020[0-9]{6}0[12]$/;

/** Whether `id` is a WABA id the sandbox hands out. */
export const isSandboxWaba = (id: string) => WABA_ID.test(id);

/** The two phone number ids of a sandbox WABA (`{waba}1`, `{waba}2`). */
export const phoneNumberIdsOf = (wabaId: string) => [`${wabaId}1`, `${wabaId}2`];

/** The WABA of a sandbox phone number id, or undefined. */
export function wabaOfPhoneNumber(phoneNumberId: string): string | undefined {
  const waba = phoneNumberId.slice(0, -1);
  return /[12]$/.test(phoneNumberId) && isSandboxWaba(waba) ? waba : undefined;
}

/**
 * A new business portfolio's messaging limit once it completed a scaling path: 2,000 people a
 * day (the sandbox's WABAs start there).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messaging-limits
 */
export const DEFAULT_LIMIT = 'TIER_2K';

/** A sandbox phone number as Graph describes it (stable, derived from the ids). */
export function describePhoneNumber(phoneNumberId: string) {
  const waba = wabaOfPhoneNumber(phoneNumberId) ?? '';
  const k = waba.slice(-1);
  const line = `${phoneNumberId.slice(-1)}${waba.slice(-5, -2)}`;
  return {
    id: phoneNumberId,
    display_phone_number: `+1 555-01${k}-${line}`,
    /** The number as webhooks' `metadata.display_phone_number` gives it (digits). */
    digits: `155501${k}${line}`,
    verified_name: `Sandbox Business ${k}`,
    quality_rating: 'GREEN',
    /** Deprecated by the provider (its per-number field); answered as the portfolio's limit. */
    messaging_limit_tier: DEFAULT_LIMIT,
    whatsapp_business_manager_messaging_limit: DEFAULT_LIMIT,
    code_verification_status: 'VERIFIED',
    platform_type: 'CLOUD_API',
    throughput: { level: 'STANDARD' },
  };
}

/**
 * What one webhook delivery came to: the app's HTTP status, `error` (no answer, no URL, an
 * unverified subscription), or `unsubscribed` (the app is not subscribed to the WABA: the
 * provider sends nothing).
 */
export type DeliveryStatus = number | 'error' | 'unsubscribed';

/**
 * Whether `appId` is subscribed to `wabaId`'s webhooks. The provider sends a WABA's webhooks
 * only to the apps subscribed to it.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/solution-providers/manage-webhooks
 */
export function isSubscribed(cloud: CloudState, wabaId: string, appId: string): boolean {
  return cloud.subscribedApps.get(wabaId)?.has(appId) ?? false;
}

/** A Graph-looking wamid. */
export const newWamid = () => `wamid.${randomBytes(24).toString('base64url')}`;

/** The sandbox's Cloud API state; see the file comment. */
export class CloudState {
  options: CloudOptions;
  readonly templates = new Map<string, SandboxTemplate[]>();
  readonly messages: PhoneMessage[] = [];
  /** The media people sent (cloud-media-store.ts). */
  readonly media = new MediaStore();
  /** The account signals' changes per phone number id (cloud-signals.ts). */
  readonly numberSignals = new Map<string, NumberSignals>();
  /**
   * The messaging limit of each business portfolio, by WABA id (the sandbox's portfolio holds
   * one WABA): shared by the WABA's numbers; {@link DEFAULT_LIMIT} until changed.
   */
  readonly portfolioLimits = new Map<string, string>();
  /** The people who stopped marketing messages, as `{phoneNumberId}:{waId}` (cloud-standing.ts). */
  readonly marketingStopped = new Set<string>();
  /** Last inbound per `{phoneNumberId}:{waId}`, ms on the sandbox clock. */
  readonly lastInbound = new Map<string, number>();
  /**
   * When each person last wrote from a click-to-WhatsApp ad or a Page call-to-action (a message
   * with a `referral`), per `{phoneNumberId}:{waId}`, sandbox clock ms (cloud-inbound.ts).
   */
  readonly referralAt = new Map<string, number>();
  /**
   * Until when each person's free entry point window is open, per `{phoneNumberId}:{waId}`,
   * sandbox clock ms ({@link CloudState.freeEntryPoint}).
   */
  readonly freeEntryUntil = new Map<string, number>();
  /**
   * Until when the person sees the business typing, per `{phoneNumberId}:{waId}` (sandbox clock
   * ms): set by a read receipt with `typing_indicator`, ended by the business's next message
   * (cloud-read.ts).
   */
  readonly typingUntil = new Map<string, number>();
  /** Sends per `biz_opaque_callback_data`. */
  readonly sendsByCallbackData = new Map<string, number>();
  sends = 0;
  /**
   * Answers the next message sends get instead of being sent (tests), first in first out: each
   * is answered with its HTTP status and Graph error, and nothing is counted, stored or
   * delivered for it. Graph answers a passing fault on its side, such as code 1 (API unknown)
   * or 131000 (something went wrong), with a 5xx; the message was not sent and may be retried.
   *
   * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
   */
  readonly sendFaults: {
    status: number;
    /** As graph-errors.ts's `GraphFault` (not imported: that file imports this one's state). */
    fault: { code: number; message: string; subcode?: number; details?: string };
  }[] = [];
  /** Apps whose webhook URL answered the subscription's verification. */
  readonly verifiedApps = new Set<string>();
  /** Every webhook delivery attempt (tests): which field, to which app, the answer. */
  readonly deliveries: { appId: string; field: string; status: DeliveryStatus }[] = [];
  /** The apps subscribed to each WABA's webhooks (`POST /{waba-id}/subscribed_apps`). */
  readonly subscribedApps = new Map<string, Set<string>>();
  /** Phone numbers registered for the Cloud API (`POST /{phone-number-id}/register`). */
  readonly registered = new Set<string>();
  /** Each number's two-step verification PIN: set by its first registration. */
  readonly twoStepPins = new Map<string, string>();
  /** Each number's registration requests, ms on the sandbox clock (the 72-hour window). */
  readonly registrationRequests = new Map<string, number[]>();
  /** When a number that hit the registration limit may be registered again, sandbox ms. */
  readonly registrationBlockedUntil = new Map<string, number>();
  readonly #rate = new Map<string, { second: number; count: number }>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #abort = new AbortController();

  constructor(options: Partial<CloudOptions> = {}) {
    this.options = { ...DEFAULT_CLOUD_OPTIONS, ...options };
    // Every webhook delivery in flight listens on this one signal: thousands at once is normal.
    setMaxListeners(0, this.#abort.signal);
  }

  /** Aborted on close: in-flight webhook deliveries stop. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /**
   * The WABA's templates, seeded on first use with the provider's own sample: an APPROVED
   * `hello_world` (en_US, UTILITY) with a text header, a body and a footer, and no variables.
   */
  templatesOf(wabaId: string): SandboxTemplate[] {
    let list = this.templates.get(wabaId);
    if (!list) {
      list = [
        {
          id: `${randomInt(100_000_000, 999_999_999)}${randomInt(100_000, 999_999)}`,
          name: 'hello_world',
          language: 'en_US',
          category: 'UTILITY',
          status: 'APPROVED',
          components: structuredClone(HELLO_WORLD),
          appId: undefined,
        },
        ...(this.options.sampleTemplates ? sampleTemplates() : []),
      ];
      this.templates.set(wabaId, list);
    }
    return list;
  }

  /**
   * Count one send from `phoneNumberId` in the current second.
   *
   * @returns false when it is over `sendsPerSecond` (answer 130429; nothing is sent).
   */
  admitSend(phoneNumberId: string, nowMs: number): boolean {
    const second = Math.floor(nowMs / 1000);
    const slot = this.#rate.get(phoneNumberId);
    if (!slot || slot.second !== second) {
      this.#rate.set(phoneNumberId, { second, count: 1 });
      return true;
    }
    slot.count++;
    return slot.count <= this.options.sendsPerSecond;
  }

  /** Count a send carrying `data` as `biz_opaque_callback_data`. */
  countSend(data: string | undefined): void {
    this.sends++;
    if (data !== undefined)
      this.sendsByCallbackData.set(data, (this.sendsByCallbackData.get(data) ?? 0) + 1);
  }

  /** Totals for `/sandbox/stats`: sends, distinct callback data, and the duplicated ones. */
  stats() {
    const duplicated = [...this.sendsByCallbackData.entries()]
      .filter(([, n]) => n > 1)
      .map(([bizOpaqueCallbackData, count]) => ({ bizOpaqueCallbackData, count }));
    return {
      sends: this.sends,
      distinctCallbackData: this.sendsByCallbackData.size,
      duplicates: duplicated.reduce((sum, d) => sum + d.count - 1, 0),
      duplicated: duplicated.slice(0, 100),
    };
  }

  /** Whether `waId` wrote to `phoneNumberId` in the 24 hours before `nowMs`. */
  inWindow(phoneNumberId: string, waId: string, nowMs: number): boolean {
    const at = this.lastInbound.get(`${phoneNumberId}:${waId}`);
    return at !== undefined && nowMs - at < DAY_MS;
  }

  /**
   * Whether a message the business sends `waId` from `phoneNumberId` at `nowMs` falls in a free
   * entry point window (cloud-pricing.ts): one is open, or this message opens it, being the
   * business's answer within 24 hours of a message the person wrote from an ad or a Page
   * call-to-action. An opened window lasts 72 hours from that answer; the referral that opened
   * it is used up. Call it only for a message that is sent (not for one that fails).
   *
   * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/pricing
   */
  freeEntryPoint(phoneNumberId: string, waId: string, nowMs: number): boolean {
    const key = `${phoneNumberId}:${waId}`;
    const until = this.freeEntryUntil.get(key);
    if (until !== undefined && nowMs < until) return true;
    const referral = this.referralAt.get(key);
    if (referral === undefined || nowMs - referral >= DAY_MS) return false;
    this.referralAt.delete(key);
    this.freeEntryUntil.set(key, nowMs + FREE_ENTRY_POINT_MS);
    return true;
  }

  /** Run `fn` after `ms` (unref'd; cancelled by `close`). */
  schedule(ms: number, fn: () => void | Promise<void>): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      void Promise.resolve()
        .then(fn)
        .catch(() => {});
    }, ms);
    timer.unref();
    this.#timers.add(timer);
  }

  /** Cancel every pending status change and abort in-flight deliveries. */
  close(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    this.#abort.abort();
  }
}
