/**
 * Personalised draft parameters: a template variable of a draft may name a field of the
 * recipient's contact (`{"contact": "firstName"}`, `{"contact": "attributes.plan"}`) with an
 * optional `fallback`, resolved per recipient when the draft is sent. A recipient whose contact
 * lacks the field (or who is no contact) and a parameter without a fallback is refused in the
 * send report; the others go on.
 *
 * @see docs/messaging.md "Templates"
 */
import { Type } from 'typebox';
import type { Database } from '../../db/client.ts';
import type { DraftParameter } from '../../db/schema/message-drafts.ts';
import { contactValues } from './drafts-repository.ts';

/** The contact fields a parameter may name; `attributes.<key>` names a custom field. */
const CONTACT_FIELD_PATTERN =
  '^(firstName|lastName|email|phone|attributes\\.[a-zA-Z][a-zA-Z0-9_]{0,39})$';

export const ContactParameterSchema = Type.Object(
  {
    contact: Type.String({
      pattern: CONTACT_FIELD_PATTERN,
      description:
        'The recipient contact’s field: `firstName`, `lastName`, `email`, `phone` or ' +
        '`attributes.<key>`.',
    }),
    fallback: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description: 'Used when the recipient has no such field; without it they are refused.',
      }),
    ),
  },
  { additionalProperties: false, title: 'DraftContactParameter' },
);

/** What personalisation reads of a contact. */
interface ContactValues {
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  phone: string | null;
  attributes: Record<string, string | number | boolean>;
}

/** Whether a draft's parameters name a contact field (the send then reads the contacts). */
export const isPersonalised = (parameters: readonly DraftParameter[]): boolean =>
  parameters.some((p) => typeof p !== 'string');

function valueOf(contact: ContactValues, field: string): string | null {
  const value = field.startsWith('attributes.')
    ? contact.attributes[field.slice('attributes.'.length)]
    : contact[field as 'firstName' | 'lastName' | 'email' | 'phone'];
  if (value === undefined || value === null) return null;
  const text = String(value).trim();
  return text === '' ? null : text;
}

/**
 * The parameters for one recipient (null when they are no contact of the portal).
 *
 * @returns the texts, or the refusal's reason (it names the field and the variable, never a
 *   value).
 */
export function resolveParameters(
  parameters: readonly DraftParameter[],
  contact: ContactValues | null,
): { parameters: string[] } | { reason: string } {
  const out: string[] = [];
  for (const [i, p] of parameters.entries()) {
    if (typeof p === 'string') {
      out.push(p);
      continue;
    }
    const value = (contact && valueOf(contact, p.contact)) ?? p.fallback ?? null;
    if (value === null)
      return {
        reason: contact
          ? `The contact has no ${p.contact} for the variable {{${i + 1}}}, and it has no fallback.`
          : `The recipient is no contact, so the variable {{${i + 1}}} (${p.contact}) has no value and no fallback.`,
      };
    out.push(value);
  }
  return { parameters: out };
}

/** A contact (by id) or a phone (E.164): one recipient of a draft. */
type DraftRecipient = { contactId: string } | { phone: string };

/**
 * The contact of each recipient (by id, or by phone for a listed phone), in order; null for a
 * recipient who is no contact of the portal.
 */
export async function contactsOf(
  db: Database,
  portalId: number,
  recipients: readonly DraftRecipient[],
): Promise<(ContactValues | null)[]> {
  const ids = recipients.flatMap((r) => ('contactId' in r ? [r.contactId] : []));
  const phones = recipients.flatMap((r) => ('phone' in r ? [r.phone] : []));
  const rows = await contactValues(db, portalId, ids, phones);
  const byId = new Map(rows.map((c) => [c.id, c]));
  const byPhone = new Map(rows.map((c) => [c.phone, c]));
  return recipients.map(
    (r) => ('contactId' in r ? byId.get(r.contactId) : byPhone.get(r.phone)) ?? null,
  );
}
