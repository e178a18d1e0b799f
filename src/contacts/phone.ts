/**
 * Phone numbers of contacts: any common notation with a country code in, E.164 out, through
 * libphonenumber-js (full metadata, so validity is checked against each country's plan).
 *
 * @see https://www.itu.int/rec/T-REC-E.164
 * @see https://gitlab.com/catamphetamine/libphonenumber-js#readme
 */
import { parsePhoneNumberWithError, ParseError } from 'libphonenumber-js/max';

/** Longest phone text accepted before parsing, in characters. */
export const PHONE_INPUT_MAX = 40;

export type PhoneResult = { ok: true; e164: string } | { ok: false; message: string };

/**
 * A region whose international prefix is `00` (most of the world's, ITU-T E.164 Annex A), so
 * that libphonenumber-js reads `00 44 20 7946 0958` as `+44 20 7946 0958`. Only numbers written
 * with that prefix are parsed with it: a national number (`020 7946 0958`) is still refused.
 */
const IDD_00_REGION = 'DE';

/** Control characters (Unicode Cc): a phone holding one is not a phone. */
const CONTROL = /\p{Cc}/u;

/**
 * Normalise `input` to E.164. A number needs its country code (`+44 20 7946 0958`, or the
 * international prefix `00`): contacts come from every country, so none is assumed. A number
 * with an extension (`ext. 5`) is refused: WhatsApp addresses have none.
 *
 * @returns the E.164 form, or a message for the `details` of a 400 saying what is wrong.
 */
export function normalisePhone(input: string): PhoneResult {
  if (CONTROL.test(input)) return { ok: false, message: 'must not contain control characters' };
  // `(+44) …` is a common way to write the country code.
  const text = input.trim().replace(/^\((\+\d{1,3})\)/, '$1');
  if (!/\d/.test(text)) return { ok: false, message: 'is not a phone number' };
  const international = text.startsWith('00');
  if (!text.startsWith('+') && !international) {
    return {
      ok: false,
      message: 'needs a country code: write it in international form, such as +44 20 7946 0958',
    };
  }
  try {
    const parsed = international
      ? parsePhoneNumberWithError(text, IDD_00_REGION)
      : parsePhoneNumberWithError(text);
    if (international && parsed.country === IDD_00_REGION && !/^00\D*49/.test(text)) {
      return {
        ok: false,
        message: 'needs a country code: write it in international form, such as +44 20 7946 0958',
      };
    }
    if (!parsed.isValid()) {
      return { ok: false, message: 'is not a valid phone number for its country code' };
    }
    if (parsed.ext !== undefined) {
      return { ok: false, message: 'must not have an extension (WhatsApp numbers have none)' };
    }
    return { ok: true, e164: parsed.number };
  } catch (err) {
    if (err instanceof ParseError) {
      return err.message === 'INVALID_COUNTRY'
        ? { ok: false, message: 'has an unknown country code' }
        : { ok: false, message: 'is not a phone number' };
    }
    throw err;
  }
}

/** The digits of a search text that looks like a phone number (`+1 650…`), else null. */
export function phoneDigitsOf(q: string): string | null {
  if (!/^\+?[\d\s().-]+$/.test(q)) return null;
  const digits = q.replace(/\D/g, '');
  return digits.length > 0 ? digits : null;
}
