/**
 * The Cloud API's answers read into Portico's shapes (cloud-api.ts): Graph lists (`data[]`,
 * `paging`), phone numbers and templates. Pure; a malformed item is dropped, never guessed.
 *
 * @see https://developers.facebook.com/docs/graph-api/results (paging)
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/manage-phone-numbers
 */
import type {
  MessageTemplate,
  PhoneNumber,
  QualityRating,
  TemplateCategory,
  TemplateComponent,
} from './cloud-api-types.ts';
import { asString } from '../graph-call.ts';

const QUALITY: ReadonlySet<string> = new Set(['GREEN', 'YELLOW', 'RED']);
const TEMPLATE_QUALITY: ReadonlySet<string> = new Set(['GREEN', 'YELLOW', 'RED', 'UNKNOWN']);
const CATEGORIES: ReadonlySet<string> = new Set(['MARKETING', 'UTILITY', 'AUTHENTICATION']);

export function first(v: unknown): Record<string, unknown> | undefined {
  return Array.isArray(v) && typeof v[0] === 'object' && v[0] !== null
    ? (v[0] as Record<string, unknown>)
    : undefined;
}

export function dataOf(body: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(body.data)
    ? body.data.filter((d): d is Record<string, unknown> => typeof d === 'object' && d !== null)
    : [];
}

/** `paging.cursors.after`, only when `paging.next` says there is a next page. */
export function afterCursor(body: Record<string, unknown>): string | null {
  const paging = body.paging as { next?: unknown; cursors?: { after?: unknown } } | undefined;
  if (typeof paging?.next !== 'string') return null;
  return asString(paging.cursors?.after) ?? null;
}

/**
 * The people a day of a messaging limit tier (`TIER_250` → 250, `TIER_2K` → 2000); null for
 * `TIER_UNLIMITED` or a word Portico does not read.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messaging-limits
 */
export function tierPerDay(tier: string | null): number | null {
  const m = tier === null ? null : /^TIER_([0-9]{1,6})(K?)$/.exec(tier);
  return m ? Number(m[1]) * (m[2] ? 1000 : 1) : null;
}

/**
 * Messages per second a number may send, from its `throughput.level`: `STANDARD` 80 (Meta's
 * default), `HIGH` 1,000 (after an automatic upgrade); 80 when not said.
 *
 * @see https://developers.facebook.com/docs/whatsapp/throughput
 */
export function throughputPerSecond(throughput: unknown): number {
  const level =
    throughput && typeof throughput === 'object'
      ? asString((throughput as Record<string, unknown>).level)
      : undefined;
  return level === 'HIGH' ? 1000 : 80;
}

export function phoneNumber(n: Record<string, unknown>, wabaId: string): PhoneNumber[] {
  const id = asString(n.id);
  if (!id) return [];
  const quality = asString(n.quality_rating) ?? 'NA';
  // The deprecated per-number field only when the current one is absent (an older answer).
  const tier =
    asString(n.whatsapp_business_manager_messaging_limit) ??
    asString(n.messaging_limit_tier) ??
    null;
  return [
    {
      id,
      displayPhoneNumber: asString(n.display_phone_number) ?? '',
      verifiedName: asString(n.verified_name) ?? '',
      qualityRating: QUALITY.has(quality) ? (quality as QualityRating) : 'NA',
      messagingLimitTier: tier,
      messagingLimitPerDay: tierPerDay(tier),
      throughputPerSecond: throughputPerSecond(n.throughput),
      wabaId,
    },
  ];
}

export function template(t: Record<string, unknown>, wabaId: string): MessageTemplate[] {
  const id = asString(t.id);
  const name = asString(t.name);
  const category = asString(t.category);
  if (!id || !name || !category || !CATEGORIES.has(category)) return [];
  const components = Array.isArray(t.components)
    ? t.components.filter(
        (c): c is TemplateComponent =>
          typeof c === 'object' && c !== null && typeof (c as { type?: unknown }).type === 'string',
      )
    : [];
  return [
    {
      id,
      name,
      language: asString(t.language) ?? '',
      category: category as TemplateCategory,
      status: asString(t.status) ?? 'PENDING',
      qualityScore: qualityScore(t.quality_score),
      components,
      wabaId,
    },
  ];
}

/** Graph's `quality_score: {score, date}` of a template: its score, UNKNOWN when not given. */
function qualityScore(q: unknown): string {
  const score = asString((q as { score?: unknown } | null | undefined)?.score);
  return score !== undefined && TEMPLATE_QUALITY.has(score) ? score : 'UNKNOWN';
}
