/**
 * The WhatsApp Business Platform Cloud API nodes Portico reads and writes on Graph, with a
 * portal's token: a WABA's phone numbers and its message templates. Used inside
 * `withProvider` (outbound-calls.ts), so the token exists only for the call, a revocation aborts
 * it, and Graph error 190 revokes the connection.
 *
 * Invariants: the token travels only in the `Authorization` header; ids placed in a path are
 * digits (Graph ids), a template name in a query is URL-encoded; Graph's snake_case becomes our
 * camelCase here and nowhere else.
 *
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/manage-phone-numbers
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/message-templates
 */
import { asString, graphCall } from './graph-call.ts';
import { ProviderError } from './provider-error.ts';

/** A sender number of a WABA (`GET /{waba-id}/phone_numbers`). */
export interface PhoneNumber {
  /** The phone number id (Graph id), the `from` of a message. */
  id: string;
  /** As the provider shows it, e.g. `+1 555-010-0001`. */
  displayPhoneNumber: string;
  verifiedName: string;
  qualityRating: 'GREEN' | 'YELLOW' | 'RED' | 'NA';
  /** e.g. `TIER_1K`; null when the provider gives none. */
  messagingLimitTier: string | null;
  wabaId: string;
}

/** One component of a template, in Graph's own shape. */
export interface TemplateComponent {
  type: 'HEADER' | 'BODY' | 'FOOTER' | 'BUTTONS';
  format?: string;
  text?: string;
  example?: unknown;
  buttons?: unknown[];
}

export type TemplateCategory = 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';

/** A message template of a WABA (`GET /{waba-id}/message_templates`). */
export interface MessageTemplate {
  id: string;
  name: string;
  /** e.g. `en_US`. */
  language: string;
  category: TemplateCategory;
  /** APPROVED, PENDING, REJECTED, PAUSED, DISABLED, … as the provider says. */
  status: string;
  components: TemplateComponent[];
  wabaId: string;
}

/** A template to submit for review. */
export interface NewTemplate {
  name: string;
  language: string;
  category: TemplateCategory;
  components: TemplateComponent[];
}

const GRAPH_ID = /^[0-9]{1,40}$/;
const QUALITY = new Set(['GREEN', 'YELLOW', 'RED', 'NA']);
const CATEGORIES = new Set(['MARKETING', 'UTILITY', 'AUTHENTICATION']);

function graphId(id: string): string {
  if (!GRAPH_ID.test(id)) throw new ProviderError('other', 'not a Graph id');
  return id;
}

function list(body: Record<string, unknown>): Record<string, unknown>[] {
  const data = body.data;
  return Array.isArray(data)
    ? data.filter((d): d is Record<string, unknown> => typeof d === 'object' && d !== null)
    : [];
}

/** `paging.cursors.after` when `paging.next` says there is a next page, else null. */
function afterCursor(body: Record<string, unknown>): string | null {
  const paging = body.paging as { next?: unknown; cursors?: { after?: unknown } } | undefined;
  if (typeof paging?.next !== 'string') return null;
  return asString(paging.cursors?.after) ?? null;
}

function phoneNumber(d: Record<string, unknown>, wabaId: string): PhoneNumber {
  const quality = asString(d.quality_rating) ?? 'NA';
  return {
    id: asString(d.id) ?? '',
    displayPhoneNumber: asString(d.display_phone_number) ?? '',
    verifiedName: asString(d.verified_name) ?? '',
    qualityRating: (QUALITY.has(quality) ? quality : 'NA') as PhoneNumber['qualityRating'],
    messagingLimitTier: asString(d.messaging_limit_tier) ?? null,
    wabaId,
  };
}

function template(d: Record<string, unknown>, wabaId: string): MessageTemplate {
  const category = asString(d.category) ?? 'UTILITY';
  return {
    id: asString(d.id) ?? '',
    name: asString(d.name) ?? '',
    language: asString(d.language) ?? '',
    category: (CATEGORIES.has(category) ? category : 'UTILITY') as TemplateCategory,
    status: asString(d.status) ?? 'UNKNOWN',
    components: Array.isArray(d.components) ? (d.components as TemplateComponent[]) : [],
    wabaId,
  };
}

export type CloudApi = ReturnType<typeof createCloudApi>;

/**
 * The Cloud API calls over `{graphBaseUrl}/{apiVersion}`. Every method rejects with
 * `ProviderError` only.
 *
 * @param options.timeoutMs each call's deadline, in milliseconds.
 */
export function createCloudApi(options: { base: string; timeoutMs: number }) {
  const { base, timeoutMs } = options;
  const call = (
    what: string,
    path: string,
    init: Omit<Parameters<typeof graphCall>[3], 'bearer'>,
    token: string,
  ) => graphCall(timeoutMs, what, `${base}/${path}`, { ...init, bearer: token });

  return {
    /**
     * Every phone number of a WABA (follows `paging` up to 20 pages of 100).
     *
     * @see https://developers.facebook.com/docs/graph-api/reference/whats-app-business-account/phone_numbers
     */
    async listPhoneNumbers(
      token: string,
      wabaId: string,
      signal?: AbortSignal,
    ): Promise<PhoneNumber[]> {
      const fields = 'id,display_phone_number,verified_name,quality_rating,messaging_limit_tier';
      const out: PhoneNumber[] = [];
      let after: string | null = null;
      for (let page = 0; page < 20; page++) {
        const query = new URLSearchParams({ fields, limit: '100', ...(after && { after }) });
        const body = await call(
          'phone numbers read',
          `${graphId(wabaId)}/phone_numbers?${query}`,
          { method: 'GET', ...(signal && { signal }) },
          token,
        );
        out.push(...list(body).map((d) => phoneNumber(d, wabaId)));
        after = afterCursor(body);
        if (!after) break;
      }
      return out;
    },

    /**
     * One page of a WABA's templates; `after` is the provider's cursor of the next page.
     *
     * @see https://developers.facebook.com/docs/graph-api/reference/whats-app-business-account/message_templates
     */
    async listTemplates(
      token: string,
      wabaId: string,
      page: { after?: string; limit?: number; name?: string; status?: string },
      signal?: AbortSignal,
    ): Promise<{ items: MessageTemplate[]; after: string | null }> {
      const query = new URLSearchParams({
        fields: 'id,name,language,category,status,components',
        limit: String(page.limit ?? 100),
        ...(page.after && { after: page.after }),
        ...(page.name && { name: page.name }),
        ...(page.status && { status: page.status }),
      });
      const body = await call(
        'templates read',
        `${graphId(wabaId)}/message_templates?${query}`,
        { method: 'GET', ...(signal && { signal }) },
        token,
      );
      return { items: list(body).map((d) => template(d, wabaId)), after: afterCursor(body) };
    },

    /**
     * Submit a template for review; it starts `PENDING`.
     *
     * @see https://developers.facebook.com/docs/whatsapp/business-management-api/message-templates#create-message-templates
     */
    async createTemplate(
      token: string,
      wabaId: string,
      t: NewTemplate,
      signal?: AbortSignal,
    ): Promise<{ id: string; status: string; category: TemplateCategory }> {
      const body = await call(
        'template creation',
        `${graphId(wabaId)}/message_templates`,
        { json: t, ...(signal && { signal }) },
        token,
      );
      const category = asString(body.category) ?? t.category;
      return {
        id: asString(body.id) ?? '',
        status: asString(body.status) ?? 'PENDING',
        category: (CATEGORIES.has(category) ? category : t.category) as TemplateCategory,
      };
    },

    /**
     * Delete every language of the template `name`.
     *
     * @see https://developers.facebook.com/docs/whatsapp/business-management-api/message-templates#deleting-templates
     */
    async deleteTemplate(
      token: string,
      wabaId: string,
      name: string,
      signal?: AbortSignal,
    ): Promise<void> {
      await call(
        'template deletion',
        `${graphId(wabaId)}/message_templates?${new URLSearchParams({ name })}`,
        { method: 'DELETE', ...(signal && { signal }) },
        token,
      );
    },
  };
}
