/**
 * The composer of `/messages`: what it offers (the connected account's sender numbers, its
 * APPROVED templates with one field per body variable, the portal's contacts), the form it
 * posts read back into a send, and a refusal of the messaging service placed next to the field
 * it concerns. The send itself is the messaging service's, as the API's `POST
 * /messaging/messages` (same checks, same errors, the credit reserved).
 *
 * @see docs/messaging.md "Sending"
 * @see docs/decisions/0024-message-composer.md
 */
import { randomBytes } from 'node:crypto';
import type { Contact } from '../contacts/contact-schemas.ts';
import type { SendMessageBody } from '../messaging/store/messages-schemas.ts';
import type { MessageTemplate, PhoneNumber } from '../messaging/provider/provider-adapter.ts';
import { templateVariables } from '../messaging/templates/templates-validation.ts';
import { AppError } from '../platform/errors.ts';

/** An approved template as the composer offers it. */
export interface ComposerTemplate {
  /** The provider's template id: the value of the choice. */
  id: string;
  name: string;
  language: string;
  wabaId: string;
  /** The BODY component's text, with its `{{n}}` variables. */
  body: string;
  /** How many variables the body has ({{1}} … {{n}}). */
  variables: number;
  /** The provider's example value of each variable, when the template has them. */
  examples: string[];
}

/** What the composer can send from and to (the account, read once per page). */
export type ComposerSource =
  | { kind: 'not_connected' }
  | { kind: 'unavailable'; message: string }
  | {
      kind: 'ready';
      numbers: PhoneNumber[];
      templates: ComposerTemplate[];
      contacts: { id: string; label: string }[];
    };

/** `text`, or a template id: what the composer is set to send. */
export const TEXT_CHOICE = 'text';

/** The fields of the send form, as typed (kept when the form comes back with an error). */
export interface ComposerForm {
  from?: string | undefined;
  contactId?: string | undefined;
  to?: string | undefined;
  text?: string | undefined;
  parameters: string[];
  /** The inbox's reply buttons' titles, its list's button label and rows, a file's caption. */
  buttons?: string[] | undefined;
  listButton?: string | undefined;
  rows?: string[] | undefined;
  caption?: string | undefined;
}

/** The fields an error can stand next to; `parameter-<n>` is the variable {{n}}. */
export type ComposerField =
  | 'compose'
  | 'from'
  | 'contactId'
  | 'to'
  | 'text'
  | `parameter-${number}`
  | 'listButton'
  | 'caption'
  | 'file'
  | `button-${number}`
  | `row-${number}`;

export type ComposerErrors = Partial<Record<ComposerField, string>>;

/** The composer as a page shows it: the source, the choice, the form and its errors. */
export interface ComposerView {
  source: ComposerSource;
  /** The chosen template, or null for free text. */
  template: ComposerTemplate | null;
  form: ComposerForm;
  errors: ComposerErrors;
  /** A refusal that concerns no single field (credit, the provider). */
  formError?: string | undefined;
  /** A fresh `Idempotency-Key` per rendered form: a double submission sends once. */
  idempotencyKey: string;
}

/** A new form's idempotency key (`web_` + 24 random bytes, base64url). */
export function newIdempotencyKey(): string {
  return `web_${randomBytes(24).toString('base64url')}`;
}

/** What {@link ComposerView.idempotencyKey} looks like (anything else is not passed on). */
export const IDEMPOTENCY_KEY = /^web_[A-Za-z0-9_-]{32}$/;

function bodyOf(t: MessageTemplate): { body: string; examples: string[] } {
  const body = t.components.find((c) => c.type === 'BODY');
  const example = (body?.example as { body_text?: unknown } | undefined)?.body_text;
  const first =
    Array.isArray(example) && Array.isArray(example[0]) ? (example[0] as unknown[]) : [];
  return {
    body: body?.text ?? '',
    examples: first.map((v) => (typeof v === 'string' ? v : '')),
  };
}

/**
 * The templates the composer offers: APPROVED ones of a WABA with a sender number, sorted by
 * name, language and WABA.
 */
export function composerTemplates(
  templates: readonly MessageTemplate[],
  numbers: readonly PhoneNumber[],
): ComposerTemplate[] {
  const wabas = new Set(numbers.map((n) => n.wabaId));
  return templates
    .filter((t) => t.status === 'APPROVED' && wabas.has(t.wabaId))
    .map((t) => {
      const { body, examples } = bodyOf(t);
      return {
        id: t.id,
        name: t.name,
        language: t.language,
        wabaId: t.wabaId,
        body,
        variables: Math.max(0, ...templateVariables(body)),
        examples,
      };
    })
    .sort(
      (a, b) =>
        a.name.localeCompare(b.name) ||
        a.language.localeCompare(b.language) ||
        a.wabaId.localeCompare(b.wabaId),
    );
}

/** A contact as the picker lists it: name (when known) and phone; opted-out ones are left out. */
export function composerContacts(contacts: readonly Contact[]): { id: string; label: string }[] {
  return contacts
    .filter((c) => c.consent.whatsapp !== 'opted_out')
    .map((c) => {
      const name = [c.firstName, c.lastName].filter(Boolean).join(' ');
      const address = c.phone ?? (c.username ? `@${c.username}` : (c.waUserId ?? c.id));
      const shown = name || c.profileName;
      return { id: c.id, label: shown ? `${shown} · ${address}` : address };
    });
}

/**
 * The template of a choice: the template with that id, null for free text, and for an absent
 * choice the first template (or free text when there is none). `undefined`: a template id the
 * account no longer offers.
 */
export function chosenTemplate(
  templates: readonly ComposerTemplate[],
  choice: string | undefined,
): ComposerTemplate | null | undefined {
  if (choice === TEXT_CHOICE) return null;
  if (!choice) return templates[0] ?? null;
  return templates.find((t) => t.id === choice);
}

/** The sender numbers a choice can go from: the template's WABA's, or all for free text. */
export function sendersOf(numbers: readonly PhoneNumber[], template: ComposerTemplate | null) {
  return template ? numbers.filter((n) => n.wabaId === template.wabaId) : [...numbers];
}

const blank = (v: string | undefined) => v === undefined || !/\S/.test(v);

/** What the form lacks, in the page's words, before anything is asked of the service. */
export function formErrors(template: ComposerTemplate | null, form: ComposerForm): ComposerErrors {
  const errors: ComposerErrors = {};
  if (!blank(form.contactId) && !blank(form.to))
    errors.to = 'Choose a contact or type a phone number, not both.';
  else if (blank(form.contactId) && blank(form.to))
    errors.to = 'Choose a contact or type a phone number.';
  if (template === null && blank(form.text)) errors.text = 'Write the text to send.';
  if (template)
    for (let i = 1; i <= template.variables; i++)
      if (blank(form.parameters[i - 1])) errors[`parameter-${i}`] = `Fill in {{${i}}}.`;
  return errors;
}

/** The API's send body of a checked form. */
export function sendBodyOf(template: ComposerTemplate | null, form: ComposerForm): SendMessageBody {
  const recipient = blank(form.contactId)
    ? { to: form.to!.trim() }
    : { contactId: form.contactId!.trim() };
  const from = blank(form.from) ? {} : { from: form.from!.trim() };
  if (template === null) return { ...recipient, ...from, type: 'text', text: { body: form.text! } };
  return {
    ...recipient,
    ...from,
    type: 'template',
    template: {
      name: template.name,
      language: template.language,
      parameters: form.parameters.slice(0, template.variables),
    },
  };
}

/**
 * Where a refusal of the messaging service goes on the form, in the page's words where the
 * API's name its own fields or routes; null for a failure that is not a refusal (thrown on).
 */
export function placeRefusal(
  err: unknown,
  form: ComposerForm,
): { field: ComposerField | null; words: string; status: number } | null {
  if (!(err instanceof AppError)) return null;
  const placed = refusalPlace(err, form);
  return placed && { ...placed, status: err.status };
}

function refusalPlace(
  err: AppError,
  form: ComposerForm,
): { field: ComposerField | null; words: string } | null {
  const detail = err.details?.[0];
  switch (err.code) {
    case 'invalid_request':
      if (detail?.field === 'body.to')
        return { field: 'to', words: `This number ${detail.message}.` };
      if (detail?.field === 'body.from')
        return { field: 'from', words: 'Choose one of the sender numbers of the account.' };
      if (detail?.field === 'body.text') return { field: 'text', words: 'Write the text to send.' };
      return { field: null, words: err.message };
    case 'not_found':
      return {
        field: 'contactId',
        words: 'This contact no longer exists; choose another or type a phone number.',
      };
    case 'recipient_opted_out':
    case 'marketing_stopped':
      return { field: blank(form.contactId) ? 'to' : 'contactId', words: err.message };
    case 'outside_service_window':
      return { field: 'text', words: err.message };
    case 'messaging_limit_reached':
      return { field: 'compose', words: err.message };
    case 'template_not_approved':
      return {
        field: 'compose',
        words:
          'This template is not approved in the business account of the sender number; ' +
          'choose another.',
      };
    case 'invalid_template_parameters':
      return { field: 'compose', words: err.message };
    case 'insufficient_credit':
    case 'not_connected':
    case 'idempotency_conflict':
    case 'provider_error':
    case 'provider_timeout':
      return { field: null, words: err.message };
    default:
      return null;
  }
}
