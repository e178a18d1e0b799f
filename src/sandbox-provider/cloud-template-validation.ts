/**
 * A `template` send checked against the sandbox's own definition of that template (its
 * `HEADER` format and text, `BODY` text, `FOOTER`, `BUTTONS`), as the Cloud API checks it:
 *
 * - no APPROVED template of that name in that language → 132001;
 * - a component's parameter count differs from the variables it needs → 132000, details
 *   `"<component>: number of localizable_params (n) does not match the expected number of
 *   params (m)"` (a media header needs one parameter of its format; a text header or the body
 *   one per distinct `{{n}}`; a URL button with a variable, or a copy-code button, one);
 * - a parameter of another format than the component needs → 132012, details
 *   `"<component>: Format mismatch, expected IMAGE, received TEXT"` (body parameters are
 *   `text`, `currency {fallback_value, code, amount_1000}` or `date_time {fallback_value}`;
 *   a URL button's `text`, a quick reply's `payload`, a copy code's `coupon_code`);
 * - a button component whose `index` (a number or a numeric string) is not one of the
 *   template's buttons, or whose `sub_type` is not that button's type → 131009;
 * - a malformed component or parameter → 100; a header medium → as any medium (131053).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/guides/send-message-templates
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages#template-object
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 */
import type { PhoneMessage, SandboxTemplate } from './cloud-state.ts';
import type { GraphFault } from './graph-errors.ts';
import {
  invalid,
  isObject,
  mediaFault,
  notValid,
  type Json,
  type MediaKind,
  type SendParties,
} from './cloud-message-validation.ts';

/** A template as sent (PhoneMessage.template) and what the phone shows of it. */
export interface SentTemplate {
  template: NonNullable<PhoneMessage['template']>;
  view: NonNullable<PhoneMessage['templateView']>;
}
type View = SentTemplate['view'];

const countMismatch = (component: string, given: number, expected: number): GraphFault => ({
  code: 132000,
  message: '(#132000) Number of parameters does not match the expected number of params',
  details: `${component}: number of localizable_params (${given}) does not match the expected number of params (${expected})`,
});
const formatMismatch = (component: string, expected: string, received: unknown): GraphFault => ({
  code: 132012,
  message: '(#132012) Parameter format does not match format in the created template',
  details: `${component}: Format mismatch, expected ${expected}, received ${typeof received === 'string' ? received.toUpperCase() : 'UNKNOWN'}`,
});

/** The distinct `{{n}}` variables of a definition's text. */
const variables = (text: unknown) =>
  new Set(typeof text === 'string' ? (text.match(/\{\{[0-9]+\}\}/g) ?? []) : []).size;

/** Fill `{{1}}`, `{{2}}`… of `text` with `params` in order. */
const fill = (text: string, params: string[]) =>
  text.replace(/\{\{([0-9]+)\}\}/g, (v, n: string) => params[Number(n) - 1] ?? v);

/** A body or text parameter's text: its `text`, or a currency's or date's fallback value. */
function paramText(p: Json): string | undefined {
  if (p.type === 'text') return typeof p.text === 'string' && p.text !== '' ? p.text : undefined;
  const inner = p.type === 'currency' ? p.currency : p.type === 'date_time' ? p.date_time : null;
  if (!isObject(inner) || typeof inner.fallback_value !== 'string') return undefined;
  if (
    p.type === 'currency' &&
    (typeof inner.code !== 'string' || !Number.isInteger(inner.amount_1000))
  )
    return undefined;
  return inner.fallback_value;
}

/** The sent components by type (`header`, `body`, `button` by index); or a fault. */
function sentComponents(components: unknown, buttonCount: number) {
  if (components === undefined) return { byType: new Map<string, Json>() };
  if (!Array.isArray(components))
    return { fault: invalid("template['components'] must be an array") };
  const byType = new Map<string, Json>();
  for (const c of components) {
    if (!isObject(c)) return { fault: invalid('Each component is an object') };
    if (c.parameters !== undefined && !Array.isArray(c.parameters))
      return { fault: invalid("A component's parameters must be an array") };
    const type = String(c.type).toLowerCase();
    let key = type;
    if (type === 'button') {
      const index = Number(c.index);
      if (!Number.isInteger(index) || index < 0 || index >= buttonCount)
        return { fault: notValid(`buttons: button at index ${String(c.index)} does not exist`) };
      key = `button:${index}`;
    } else if (type !== 'header' && type !== 'body')
      return { fault: invalid(`Component type ${String(c.type)} is not valid`) };
    if (byType.has(key)) return { fault: notValid(`Component ${key} given twice`) };
    byType.set(key, c);
  }
  return { byType };
}

const paramsOf = (c: Json | undefined) => (c?.parameters ?? []) as unknown[];

/** The header: its parameter count and format, and what it shows. */
function checkHeader(
  parties: SendParties,
  def: Json | undefined,
  sent: Json | undefined,
): { fault: GraphFault } | { header?: View['header'] } {
  const format = (typeof def?.format === 'string' ? def.format : 'TEXT').toUpperCase();
  const media = ['IMAGE', 'VIDEO', 'DOCUMENT'].includes(format);
  const expected = !def ? 0 : media ? 1 : variables(def.text);
  const params = paramsOf(sent);
  if (params.length !== expected)
    return { fault: countMismatch('header', params.length, expected) };
  if (!def) return {};
  if (media) {
    const p = params[0];
    const kind = format.toLowerCase() as MediaKind;
    if (!isObject(p) || p.type !== kind)
      return { fault: formatMismatch('header', format, isObject(p) ? p.type : undefined) };
    const fault = mediaFault(parties, kind, `header['parameters'][0]['${kind}']`, p[kind]);
    if (fault) return { fault };
    const m = p[kind] as Json;
    return {
      header: {
        media: {
          type: kind,
          ...(typeof m.id === 'string' && { id: m.id }),
          ...(typeof m.link === 'string' && { link: m.link }),
        },
      },
    };
  }
  const texts: string[] = [];
  for (const p of params) {
    if (!isObject(p) || p.type !== 'text')
      return { fault: formatMismatch('header', 'TEXT', isObject(p) ? p.type : undefined) };
    const text = paramText(p);
    if (text === undefined) return { fault: invalid("header: a text parameter needs its 'text'") };
    texts.push(text);
  }
  return typeof def.text === 'string' ? { header: { text: fill(def.text, texts) } } : {};
}

/** The body's parameters, as texts. */
function checkBody(def: Json | undefined, sent: Json | undefined) {
  const params = paramsOf(sent);
  const expected = variables(def?.text);
  if (params.length !== expected) return { fault: countMismatch('body', params.length, expected) };
  const texts: string[] = [];
  for (const p of params) {
    if (!isObject(p) || !['text', 'currency', 'date_time'].includes(String(p.type)))
      return { fault: formatMismatch('body', 'TEXT', isObject(p) ? p.type : undefined) };
    const text = paramText(p);
    if (text === undefined)
      return { fault: invalid(`body: a ${String(p.type)} parameter is incomplete`) };
    texts.push(text);
  }
  return { texts };
}

/** The parameter type of each button type that takes one. */
const PARAM_OF_BUTTON: Record<string, string> = {
  URL: 'text',
  COPY_CODE: 'coupon_code',
  QUICK_REPLY: 'payload',
};

/** The buttons: each sent button component against the definition's button at its index. */
function checkButtons(defs: Json[], byType: Map<string, Json>) {
  const buttons: NonNullable<View['buttons']> = [];
  for (const [i, def] of defs.entries()) {
    // An authentication template's one-time-password button takes its code as a URL button.
    const type = String(def.type).toUpperCase() === 'OTP' ? 'URL' : String(def.type).toUpperCase();
    const sent = byType.get(`button:${i}`);
    const where = `button at index ${i}`;
    if (sent && String(sent.sub_type).toUpperCase() !== type)
      return {
        fault: notValid(
          `buttons: sub_type ${String(sent.sub_type)} does not match the ${type} ${where}`,
        ),
      };
    const otp = String(def.type).toUpperCase() === 'OTP';
    const expected =
      type === 'COPY_CODE' || otp || (type === 'URL' && variables(def.url) > 0) ? 1 : 0;
    const params = paramsOf(sent);
    if (params.length !== expected && !(type === 'QUICK_REPLY' && params.length === 1))
      return { fault: countMismatch(where, params.length, expected) };
    const p = params[0] as Json | undefined;
    const want = PARAM_OF_BUTTON[type] ?? 'none';
    if (p !== undefined && (!isObject(p) || p.type !== want || typeof p[want] !== 'string'))
      return {
        fault: formatMismatch(where, want.toUpperCase(), isObject(p) ? p.type : undefined),
      };
    const value = p?.[want] as string | undefined;
    buttons.push({
      type,
      text: typeof def.text === 'string' ? def.text : '',
      ...(typeof def.url === 'string' && { url: fill(def.url, value ? [value] : []) }),
      ...(type === 'QUICK_REPLY' && {
        payload: value ?? (typeof def.text === 'string' ? def.text : ''),
      }),
    });
  }
  return { buttons };
}

/**
 * Check a send's `template` object against the WABA's templates.
 *
 * @returns the template and what the phone shows of it, or the fault to answer.
 */
export function checkTemplate(
  parties: SendParties,
  template: unknown,
): { fault: GraphFault } | { definition: SandboxTemplate; sent: SentTemplate } {
  if (!isObject(template) || typeof template.name !== 'string' || !isObject(template.language))
    return { fault: invalid("The parameter template['name'] and ['language'] are required.") };
  const { name } = template;
  const code = String(template.language.code);
  const definition = parties.state.cloud
    .templatesOf(parties.wabaId)
    .find((t) => t.name === name && t.language === code && t.status === 'APPROVED');
  if (!definition)
    return {
      fault: {
        code: 132001,
        // Graph puts the code and its title first in `message` (Meta's error-codes page).
        message: '(#132001) Template name does not exist in the translation',
        details: `template name (${name}) does not exist in ${code}`,
      },
    };
  const def = (type: string) => definition.components.find((c) => c.type === type);
  const buttonDefs = (def('BUTTONS')?.buttons ?? []) as Json[];
  const sent = sentComponents(template.components, buttonDefs.length);
  if ('fault' in sent) return { fault: sent.fault };
  const header = checkHeader(parties, def('HEADER'), sent.byType.get('header'));
  if ('fault' in header) return header;
  const body = checkBody(def('BODY'), sent.byType.get('body'));
  if ('fault' in body) return { fault: body.fault };
  const buttons = checkButtons(buttonDefs, sent.byType);
  if ('fault' in buttons) return { fault: buttons.fault };
  const bodyText = def('BODY')?.text;
  const footer = def('FOOTER')?.text;
  return {
    definition,
    sent: {
      template: { name: definition.name, language: definition.language, params: body.texts },
      view: {
        ...(header.header && { header: header.header }),
        ...(typeof bodyText === 'string' && { body: fill(bodyText, body.texts) }),
        ...(typeof footer === 'string' && { footer }),
        ...(buttons.buttons.length > 0 && { buttons: buttons.buttons }),
      },
    },
  };
}
