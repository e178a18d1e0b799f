/**
 * What names an erased person in stored free text (GDPR art. 17): their phone (as written in
 * any format libphonenumber-js recognises: `+1 650-555-7321`, `(650) 555-7321`, `+16505557321`),
 * email and names, replaced by `erased`. Used where a contact's erasure cannot delete a
 * row (a ticket's text, a stored `Idempotency-Key` response) and must strip the person from it.
 *
 * @see docs/security.md
 * @see https://gitlab.com/catamphetamine/libphonenumber-js#findphonenumbersintexttext-string-defaultcountry-string--options-object-object
 */
import { findPhoneNumbersInText, parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** A person being erased: what stored text may name. */
export interface ErasedPerson {
  portalId: number;
  /** Their contact id (`ctc_…`). */
  id: string;
  /** E.164; null for a person known only by their business-scoped user id. */
  phone: string | null;
  /** Their BSUID, parent BSUID, WhatsApp username and profile name, when known. */
  waUserId?: string | null | undefined;
  parentWaUserId?: string | null | undefined;
  username?: string | null | undefined;
  profileName?: string | null | undefined;
  email?: string | null | undefined;
  firstName?: string | null | undefined;
  lastName?: string | null | undefined;
}

/**
 * The person's WhatsApp addresses, as a message's `wa_id` holds them: the phone (E.164) and the
 * business-scoped user id, whichever are known (at least one for a stored contact).
 */
export function addressesOf(person: Pick<ErasedPerson, 'phone' | 'waUserId'>): string[] {
  return [person.phone, person.waUserId].filter((a): a is string => typeof a === 'string');
}

/** What replaces the person in a tombstone: the word the anonymised messages use for `to`. */
export const ERASED = 'erased';

/**
 * The person's terms to take out of a text: phone (also without its `+`), email, and each name
 * as a whole word, case-insensitive.
 */
export function personPattern(person: ErasedPerson): RegExp {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const terms = [
    ...(person.phone ? [`\\+?${escape(person.phone.replace(/^\+/, ''))}`] : []),
    ...[person.email, person.waUserId, person.parentWaUserId, person.username]
      .filter((t): t is string => typeof t === 'string' && t.length > 0)
      .map(escape),
    ...[person.firstName, person.lastName, person.profileName]
      .filter((n): n is string => typeof n === 'string' && n.trim().length > 1)
      .map((n) => `(?<![\\p{L}\\p{N}])${escape(n.trim())}(?![\\p{L}\\p{N}])`),
  ];
  return new RegExp(terms.join('|'), 'giu');
}

/**
 * The digits of the person's national number (`6505557321` for `+16505557321`): what any
 * written form of their phone contains once everything but digits is dropped.
 */
export function nationalDigits(person: ErasedPerson): string | null {
  if (person.phone === null) return null;
  return parsePhoneNumberFromString(person.phone)?.nationalNumber ?? person.phone.slice(1);
}

/** `text` with every written form of the person's phone replaced by `erased`. */
function withoutPhone(text: string, phone: string): string {
  // National forms are read in the person's own country (`(650) 555-7321` for a US number).
  const country = parsePhoneNumberFromString(phone)?.country;
  const found = findPhoneNumbersInText(text, country).filter((f) => f.number.number === phone);
  let out = text;
  for (const { startsAt, endsAt } of found.reverse()) {
    // A number in brackets, `(+16505557321)`, is found with its opening bracket: keep it.
    const open = text[startsAt] === '(' && !text.slice(startsAt, endsAt).includes(')');
    out = out.slice(0, startsAt + (open ? 1 : 0)) + ERASED + out.slice(endsAt);
  }
  return out;
}

/** `text` with every term of `person` replaced by `erased`. */
export function withoutPerson(text: string, person: ErasedPerson): string {
  const kept = person.phone === null ? text : withoutPhone(text, person.phone);
  return kept.replace(personPattern(person), ERASED);
}
