/**
 * What names an erased person in stored free text (GDPR art. 17): their phone, email and names,
 * matched as one pattern, replaced by `erased`. Used where a contact's erasure cannot delete a
 * row (a ticket's text, a stored `Idempotency-Key` response) and must strip the person from it.
 *
 * @see docs/security.md
 */

/** A person being erased: what stored text may name. */
export interface ErasedPerson {
  portalId: number;
  /** Their contact id (`ctc_…`). */
  id: string;
  /** E.164. */
  phone: string;
  email?: string | null | undefined;
  firstName?: string | null | undefined;
  lastName?: string | null | undefined;
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
    `\\+?${escape(person.phone.replace(/^\+/, ''))}`,
    ...(person.email ? [escape(person.email)] : []),
    ...[person.firstName, person.lastName]
      .filter((n): n is string => typeof n === 'string' && n.trim().length > 1)
      .map((n) => `(?<![\\p{L}\\p{N}])${escape(n.trim())}(?![\\p{L}\\p{N}])`),
  ];
  return new RegExp(terms.join('|'), 'giu');
}

/** `text` with every term of `person` replaced by `erased`. */
export function withoutPerson(text: string, person: ErasedPerson): string {
  return text.replace(personPattern(person), ERASED);
}
