/**
 * A template message's `components` as the Cloud API takes them (snake_case: `sub_type`, `index`
 * as a string, `fallback_value`, `amount_1000`, `date_time`, `coupon_code`, media by the
 * provider's `id` or a `link`), built by the delivery worker from what the send kept.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages#template-object
 * @see docs/messaging.md "Templates"
 */
import type { AcceptedTemplate, TemplateParameter } from './template-send.ts';

/**
 * Our `med_…` id → the provider's media id (resolved before the message is built: the worker
 * fails a message whose medium is gone before it gets here).
 */
type ProviderMediaIdOf = (mediaId: string) => string | undefined;

type WireParameter = Record<string, unknown>;

function mediaOf(
  ref: { mediaId?: string | undefined; link?: string | undefined; filename?: string | undefined },
  providerMediaId: ProviderMediaIdOf,
): Record<string, string> {
  const filename = ref.filename === undefined ? {} : { filename: ref.filename };
  if (ref.mediaId === undefined) return { link: ref.link ?? '', ...filename };
  return { id: providerMediaId(ref.mediaId) ?? '', ...filename };
}

function wireParameter(p: TemplateParameter, providerMediaId: ProviderMediaIdOf): WireParameter {
  switch (p.type) {
    case 'text':
      return { type: 'text', text: p.text };
    case 'currency':
      return {
        type: 'currency',
        currency: {
          fallback_value: p.currency.fallbackValue,
          code: p.currency.code,
          amount_1000: p.currency.amount1000,
        },
      };
    case 'date_time':
      return { type: 'date_time', date_time: { fallback_value: p.dateTime.fallbackValue } };
    case 'image':
      return { type: 'image', image: mediaOf(p.image, providerMediaId) };
    case 'video':
      return { type: 'video', video: mediaOf(p.video, providerMediaId) };
    case 'document':
      return { type: 'document', document: mediaOf(p.document, providerMediaId) };
    case 'payload':
      return { type: 'payload', payload: p.payload };
    case 'coupon_code':
      return { type: 'coupon_code', coupon_code: p.couponCode };
  }
}

/**
 * The Cloud API components of a template message: `parameters` (the shorthand) as the body's
 * text parameters, then each component as given.
 *
 * @returns the components; empty when the template takes no parameter.
 */
export function templateWireComponents(
  template: Partial<AcceptedTemplate> | undefined,
  providerMediaId: ProviderMediaIdOf,
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const shorthand = template?.parameters ?? [];
  if (shorthand.length > 0)
    out.push({ type: 'body', parameters: shorthand.map((text) => ({ type: 'text', text })) });
  for (const c of template?.components ?? []) {
    const parameters = c.parameters.map((p) => wireParameter(p, providerMediaId));
    out.push(
      c.type === 'button'
        ? { type: 'button', sub_type: c.subType, index: String(c.index), parameters }
        : { type: c.type, parameters },
    );
  }
  return out;
}
