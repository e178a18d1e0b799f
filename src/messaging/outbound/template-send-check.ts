/**
 * A template send checked against the template's definition (its components as the provider
 * lists them), before anything is reserved or queued, so that the provider's parameter errors
 * (132000 "Number of parameters does not match", 132012 "Parameter format does not match")
 * are not the way a client learns them:
 *
 * - HEADER: a TEXT header with `{{1}}` takes one text (or currency, date_time) parameter of at
 *   most 60 characters; an IMAGE, DOCUMENT or VIDEO header takes one parameter of that kind
 *   (our `med_…` id of that kind, or an https link), required. A header without a variable
 *   takes none.
 * - BODY: as many parameters as the body has distinct variables, text, currency or date_time
 *   (by `parameters`, the text shorthand, or a `body` component; not both).
 * - BUTTONS, by index: a URL button whose url has `{{1}}` needs its suffix (one text, subType
 *   `url`); a COPY_CODE button its `coupon_code` (subType `copy_code`); an OTP button of an
 *   authentication template its code (subType `url`, text); a QUICK_REPLY button may take a
 *   `payload` (subType `quick_reply`); other buttons take none.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/guides/send-message-templates
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 * @see docs/messaging.md "Templates"
 */
import type { TemplateComponent } from '../../partner/cloud-api/cloud-api-types.ts';
import { AppError, type ErrorDetail } from '../../platform/errors.ts';
import type { SendableMedium } from '../media/outbound-media.ts';
import { templateVariables } from '../templates/templates-validation.ts';
import {
  TEMPLATE_HEADER_TEXT_MAX,
  type AcceptedTemplate,
  type TemplateComponentSend,
  type TemplateParameter,
  type TemplateSend,
} from '../templates/template-send.ts';

type MediaKind = 'image' | 'document' | 'video';
type ButtonSubType = 'quick_reply' | 'url' | 'copy_code';

/** What a template's definition asks of a send. */
interface Expected {
  /** null: no header parameter; `text`: one text-like one; else one medium of that kind. */
  header: 'text' | MediaKind | 'unsupported' | null;
  headerFormat: string;
  bodyVariables: number;
  /** Per button index: the subType it takes a parameter under, and whether it must. */
  buttons: ({ subType: ButtonSubType; required: boolean } | null)[];
}

const TEXT_LIKE = new Set(['text', 'currency', 'date_time']);
const BUTTON_PARAMETER: Record<ButtonSubType, TemplateParameter['type']> = {
  url: 'text',
  quick_reply: 'payload',
  copy_code: 'coupon_code',
};

const distinctVariables = (text: unknown) =>
  typeof text === 'string' ? new Set(templateVariables(text)).size : 0;

/** What the definition's buttons take, by index. */
function buttonsOf(component: TemplateComponent | undefined): Expected['buttons'] {
  return (component?.buttons ?? []).map((b) => {
    const button = (b ?? {}) as { type?: unknown; url?: unknown };
    switch (button.type) {
      case 'URL':
        return distinctVariables(button.url) > 0 ? { subType: 'url', required: true } : null;
      case 'OTP':
        return { subType: 'url', required: true };
      case 'COPY_CODE':
        return { subType: 'copy_code', required: true };
      case 'QUICK_REPLY':
        return { subType: 'quick_reply', required: false };
      default:
        return null;
    }
  });
}

/** What a template's components ask of a send. */
function expectedOf(components: readonly TemplateComponent[]): Expected {
  const header = components.find((c) => c.type === 'HEADER');
  const format = (header?.format ?? 'TEXT').toUpperCase();
  const headerKind: Expected['header'] = !header
    ? null
    : format === 'TEXT'
      ? distinctVariables(header.text) > 0
        ? 'text'
        : null
      : format === 'IMAGE' || format === 'DOCUMENT' || format === 'VIDEO'
        ? (format.toLowerCase() as MediaKind)
        : 'unsupported';
  return {
    header: headerKind,
    headerFormat: format,
    bodyVariables: distinctVariables(components.find((c) => c.type === 'BODY')?.text),
    buttons: buttonsOf(components.find((c) => c.type === 'BUTTONS')),
  };
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
const a = (kind: string) => (/^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`);

/** The checks' context: where errors go, how a medium is found. */
interface Run {
  errors: ErrorDetail[];
  from: string;
  findMedium: (id: string) => Promise<SendableMedium | null>;
}

const FIELD = 'body.template';

function label(i: number, c: TemplateComponentSend): string {
  const which = c.type === 'button' ? `button ${c.index}, ${c.subType}` : c.type;
  return `components[${i}] (${which})`;
}

/** A medium parameter: one of `mediaId` and `link`; an id of this portal, kind and sender. */
async function checkMedium(run: Run, at: string, kind: MediaKind, p: TemplateParameter) {
  const ref =
    p.type === 'image'
      ? p.image
      : p.type === 'video'
        ? p.video
        : p.type === 'document'
          ? p.document
          : null;
  if (!ref) return;
  if ((ref.mediaId === undefined) === (ref.link === undefined)) {
    run.errors.push({ field: `${at}.${kind}`, message: 'give exactly one of mediaId and link' });
    return;
  }
  if (ref.mediaId === undefined) return;
  const medium = await run.findMedium(ref.mediaId);
  const problem = !medium
    ? 'is not a medium of this account that can be sent (unknown or expired)'
    : medium.kind !== kind
      ? `is ${a(medium.kind)}, not ${a(kind)}`
      : medium.phoneNumberId !== run.from
        ? 'was uploaded for another sender number'
        : null;
  if (problem) run.errors.push({ field: `${at}.${kind}.mediaId`, message: problem });
}

async function checkHeader(run: Run, e: Expected, i: number, c: TemplateComponentSend) {
  const at = `${FIELD}.components[${i}]`;
  const name = label(i, c);
  if (e.header === null || e.header === 'unsupported') {
    run.errors.push({
      field: at,
      message:
        e.header === null
          ? `${name}: the template's header has no variable, so it takes no parameter`
          : `${name}: a ${e.headerFormat} header cannot be sent through this API`,
    });
    return;
  }
  const [p] = c.parameters;
  if (!p) return;
  if (e.header === 'text') {
    if (!TEXT_LIKE.has(p.type))
      run.errors.push({
        field: `${at}.parameters[0]`,
        message: `${name}: expects one text parameter`,
      });
    else if (p.type === 'text' && p.text.length > TEMPLATE_HEADER_TEXT_MAX)
      run.errors.push({
        field: `${at}.parameters[0].text`,
        message: `${name}: must be at most ${TEMPLATE_HEADER_TEXT_MAX} characters`,
      });
    return;
  }
  if (p.type !== e.header) {
    run.errors.push({
      field: `${at}.parameters[0]`,
      message: `${name}: expects one ${e.header} parameter (the header is ${e.headerFormat})`,
    });
    return;
  }
  await checkMedium(run, `${at}.parameters[0]`, e.header, p);
}

function checkBody(run: Run, e: Expected, i: number, c: TemplateComponentSend) {
  const at = `${FIELD}.components[${i}]`;
  if (c.parameters.length !== e.bodyVariables)
    run.errors.push({
      field: `${at}.parameters`,
      message: `${label(i, c)}: expects ${plural(e.bodyVariables, 'parameter')} (the body's variables), got ${c.parameters.length}`,
    });
  c.parameters.forEach((p, j) => {
    if (!TEXT_LIKE.has(p.type))
      run.errors.push({
        field: `${at}.parameters[${j}]`,
        message: `${label(i, c)}: parameter ${j} must be text, currency or date_time, not ${p.type}`,
      });
  });
}

function checkButton(run: Run, e: Expected, i: number, c: TemplateComponentSend) {
  if (c.type !== 'button') return;
  const at = `${FIELD}.components[${i}]`;
  const name = label(i, c);
  if (c.index >= e.buttons.length) {
    run.errors.push({
      field: `${at}.index`,
      message: `${name}: the template has ${plural(e.buttons.length, 'button')}`,
    });
    return;
  }
  const wanted = e.buttons[c.index];
  if (!wanted || wanted.subType !== c.subType) {
    run.errors.push({
      field: `${at}.subType`,
      message: wanted
        ? `${name}: button ${c.index} takes subType ${wanted.subType}`
        : `${name}: button ${c.index} takes no parameter`,
    });
    return;
  }
  const kind = BUTTON_PARAMETER[c.subType];
  if (c.parameters[0]?.type !== kind)
    run.errors.push({
      field: `${at}.parameters[0]`,
      message: `${name}: expects one ${kind} parameter`,
    });
}

/** The components that must be given and were not. */
function checkMissing(run: Run, e: Expected, send: TemplateSend) {
  const given = send.components ?? [];
  if (
    (e.header === 'text' ||
      e.header === 'image' ||
      e.header === 'document' ||
      e.header === 'video') &&
    !given.some((c) => c.type === 'header')
  )
    run.errors.push({
      field: `${FIELD}.components`,
      message: `the template's header (${e.headerFormat}) needs a header component with one ${e.header} parameter`,
    });
  const body = given.some((c) => c.type === 'body');
  if (!body && (send.parameters?.length ?? 0) !== e.bodyVariables)
    run.errors.push({
      field: `${FIELD}.parameters`,
      message: `expects ${plural(e.bodyVariables, 'body parameter')} (the body's variables), got ${send.parameters?.length ?? 0}`,
    });
  e.buttons.forEach((b, index) => {
    if (b?.required && !given.some((c) => c.type === 'button' && c.index === index))
      run.errors.push({
        field: `${FIELD}.components`,
        message: `the template's button ${index} needs a button component (subType ${b.subType}, index ${index}) with one ${BUTTON_PARAMETER[b.subType]} parameter`,
      });
  });
}

/** The same component twice, and `parameters` beside a `body` component. */
function checkRepeats(run: Run, send: TemplateSend) {
  const seen = new Set<string>();
  (send.components ?? []).forEach((c, i) => {
    const key = c.type === 'button' ? `button ${c.index}` : c.type;
    if (seen.has(key))
      run.errors.push({
        field: `${FIELD}.components[${i}]`,
        message: `${label(i, c)}: the ${key} is given twice`,
      });
    seen.add(key);
    if (c.type === 'body' && send.parameters !== undefined)
      run.errors.push({
        field: `${FIELD}.parameters`,
        message: '`parameters` and a body component are exclusive: give one of them',
      });
  });
}

/**
 * Check `send` against the template's `components` (MessageTemplate.components, from the
 * provider's cache), sending from phone number id `from`.
 *
 * @returns what the message keeps: the parameters and components as given.
 * @throws AppError `invalid_template_parameters` (422) naming the first refusal (component and
 *   position), every refusal in `details` with its field path (`body.template.components[0]…`).
 */
export async function checkTemplateSend(args: {
  components: readonly TemplateComponent[];
  send: TemplateSend;
  from: string;
  findMedium: (id: string) => Promise<SendableMedium | null>;
}): Promise<AcceptedTemplate> {
  const { send } = args;
  const e = expectedOf(args.components);
  const run: Run = { errors: [], from: args.from, findMedium: args.findMedium };
  checkRepeats(run, send);
  for (const [i, c] of (send.components ?? []).entries()) {
    if (c.type === 'header') await checkHeader(run, e, i, c);
    else if (c.type === 'body') checkBody(run, e, i, c);
    else checkButton(run, e, i, c);
  }
  checkMissing(run, e, send);
  const [first] = run.errors;
  if (first)
    throw new AppError(
      'invalid_template_parameters',
      `The parameters do not fit the template "${send.name}" (${send.language}): ${first.message}.`,
      { details: run.errors },
    );
  return {
    parameters: send.parameters ?? [],
    ...(send.components && send.components.length > 0 && { components: send.components }),
  };
}
