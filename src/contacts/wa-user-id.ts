/**
 * The provider's business-scoped user id (BSUID): how WhatsApp names a person to one business
 * portfolio, with or without their phone number. Its form is the person's ISO 3166 alpha-2
 * country code, a period, and up to 128 letters and digits (`US.13491208655302741918`); a
 * parent BSUID, shared by a managed business's linked portfolios, has `ENT.` after the country
 * (`US.ENT.11815799212886844830`). Portico stores and sends it back exactly as received.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
 */

/** The longest BSUID accepted: two letters, `.`, `ENT.`, 128 characters. */
export const WA_USER_ID_MAX = 135;

const BSUID = /^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/;

/** Whether `value` has the form of a BSUID or parent BSUID (never a phone number). */
export function isWaUserId(value: string): boolean {
  return BSUID.test(value);
}
