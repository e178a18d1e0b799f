/**
 * The checks of an `interactive` send, with the Cloud API's limits (a value outside them →
 * 131009 naming the limit; a missing or mistyped field → 100):
 *
 * - every type: `body.text` 1–1024 (optional on `product`), `footer.text` ≤ 60, `header`
 *   `{type: "text", text ≤ 60}` or `{type: "image"|"video"|"document", <type>: {id|link}}`
 *   (a list or product list takes a text header only; a product list needs one);
 * - `button`: `action.buttons` 1–3 of `{type: "reply", reply: {id ≤ 256, title 1–20}}`, ids and
 *   titles unique;
 * - `list`: `action.button` 1–20, `action.sections` 1–10 (`title` ≤ 24, required when there are
 *   several), rows 1–10 in all, each `{id ≤ 200 (unique), title 1–24, description? ≤ 72}`;
 * - `cta_url`: `action: {name: "cta_url", parameters: {display_text 1–20, url (http/https)}}`;
 * - `product`: `action: {catalog_id, product_retailer_id}`; `product_list`: `action:
 *   {catalog_id, sections 1–10 of {title, product_items: [{product_retailer_id}]}}`, 30 items
 *   in all (the sandbox has no catalogs: any id is taken).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/messages/interactive-reply-buttons-messages
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/messages/interactive-list-messages
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/messages/interactive-cta-url-messages
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages#interactive-object
 */
import type { GraphFault } from './graph-errors.ts';
import {
  firstFault,
  invalid,
  isObject,
  lengthFault,
  mediaFault,
  notValid,
  type Json,
  type SendParties,
} from './cloud-message-validation.ts';

const TYPES = ['button', 'list', 'cta_url', 'product', 'product_list'];
const HEADER_MEDIA = ['image', 'video', 'document'] as const;

/** The items of an array field, or a fault naming it. */
function arrayOf(
  what: string,
  value: unknown,
  min: number,
  max: number,
): { items: unknown[] } | { fault: GraphFault } {
  if (!Array.isArray(value)) return { fault: invalid(`The parameter ${what} is required.`) };
  if (value.length < min || value.length > max)
    return {
      fault: notValid(`Invalid ${what} count. Min allowed: ${min}, Max allowed: ${max}`),
    };
  return { items: value };
}

function headerFault(parties: SendParties, type: string, header: unknown) {
  if (header === undefined)
    return type === 'product_list'
      ? invalid("The parameter interactive['header'] is required.")
      : undefined;
  if (!isObject(header)) return invalid("interactive['header'] must be an object");
  if (header.type === 'text') return lengthFault('Header text', header.text, 1, 60);
  const kind = HEADER_MEDIA.find((k) => k === header.type);
  if (!kind) return invalid("interactive['header']['type'] is not valid");
  if (type === 'list' || type === 'product_list')
    return notValid(`A ${type} message takes a text header only`);
  return mediaFault(parties, kind, `interactive['header']['${kind}']`, header[kind]);
}

function buttonsFault(action: Json) {
  const list = arrayOf('buttons', action.buttons, 1, 3);
  if ('fault' in list) return list.fault;
  const ids = new Set<string>();
  const titles = new Set<string>();
  for (const b of list.items) {
    const reply = isObject(b) && b.type === 'reply' ? b.reply : undefined;
    if (!isObject(reply)) return invalid("Each button is {type: 'reply', reply: {id, title}}");
    const fault = firstFault(
      () => lengthFault('Button id', reply.id, 1, 256),
      () => lengthFault('Button title', reply.title, 1, 20),
    );
    if (fault) return fault;
    if (ids.has(reply.id as string)) return notValid(`Duplicate button id: ${String(reply.id)}`);
    if (titles.has(reply.title as string))
      return notValid(`Duplicate button title: ${String(reply.title)}`);
    ids.add(reply.id as string);
    titles.add(reply.title as string);
  }
  return undefined;
}

function listFault(action: Json) {
  const label = lengthFault('Button text', action.button, 1, 20);
  if (label) return label;
  const sections = arrayOf('sections', action.sections, 1, 10);
  if ('fault' in sections) return sections.fault;
  const ids = new Set<string>();
  let rows = 0;
  for (const s of sections.items) {
    if (!isObject(s)) return invalid('Each section is an object');
    const title = lengthFault('Section title', s.title, sections.items.length > 1 ? 1 : 0, 24);
    if (title) return title;
    const list = arrayOf('rows', s.rows, 1, 10);
    if ('fault' in list) return list.fault;
    for (const r of list.items) {
      if (!isObject(r)) return invalid('Each row is {id, title, description?}');
      const fault = firstFault(
        () => lengthFault('Row id', r.id, 1, 200),
        () => lengthFault('Row title', r.title, 1, 24),
        () => lengthFault('Row description', r.description, 0, 72),
      );
      if (fault) return fault;
      if (ids.has(r.id as string)) return notValid(`Duplicate row id: ${String(r.id)}`);
      ids.add(r.id as string);
    }
    rows += list.items.length;
  }
  return rows > 10 ? notValid(`Total row count exceed max allowed count: 10`) : undefined;
}

function ctaUrlFault(action: Json) {
  const p = action.parameters;
  if (action.name !== 'cta_url' || !isObject(p))
    return invalid("interactive['action'] is {name: 'cta_url', parameters: {display_text, url}}");
  const text = lengthFault('Display text', p.display_text, 1, 20);
  if (text) return text;
  let url: URL | undefined;
  try {
    url = new URL(String(p.url));
  } catch {
    url = undefined;
  }
  return url && (url.protocol === 'https:' || url.protocol === 'http:')
    ? undefined
    : notValid("interactive['action']['parameters']['url'] is not a valid URL");
}

function productFault(type: string, action: Json) {
  if (typeof action.catalog_id !== 'string' || action.catalog_id === '')
    return invalid("The parameter interactive['action']['catalog_id'] is required.");
  if (type === 'product')
    return typeof action.product_retailer_id === 'string'
      ? undefined
      : invalid("The parameter interactive['action']['product_retailer_id'] is required.");
  const sections = arrayOf('sections', action.sections, 1, 10);
  if ('fault' in sections) return sections.fault;
  let items = 0;
  for (const s of sections.items) {
    const list = isObject(s) ? arrayOf('product_items', s.product_items, 1, 30) : undefined;
    if (!list) return invalid('Each section is {title, product_items}');
    if ('fault' in list) return list.fault;
    items += list.items.length;
  }
  return items > 30 ? notValid('Total product count exceed max allowed count: 30') : undefined;
}

/**
 * The fault of an `interactive` object, or undefined when the Cloud API takes it.
 */
export function interactiveFault(
  parties: SendParties,
  interactive: unknown,
): GraphFault | undefined {
  if (!isObject(interactive)) return invalid('The parameter interactive is required.');
  const type = String(interactive.type);
  if (!TYPES.includes(type)) return invalid(`interactive['type'] ${type} is not valid`);
  const { body, footer, action } = interactive;
  if (!isObject(action)) return invalid("The parameter interactive['action'] is required.");
  return firstFault(
    () =>
      body === undefined && type === 'product'
        ? undefined
        : isObject(body)
          ? lengthFault('Body text', body.text, 1, 1024)
          : invalid("The parameter interactive['body'] is required."),
    () =>
      footer === undefined
        ? undefined
        : isObject(footer)
          ? lengthFault('Footer text', footer.text, 1, 60)
          : invalid("interactive['footer'] must be an object"),
    () => headerFault(parties, type, interactive.header),
    () =>
      type === 'button'
        ? buttonsFault(action)
        : type === 'list'
          ? listFault(action)
          : type === 'cta_url'
            ? ctaUrlFault(action)
            : productFault(type, action),
  );
}
