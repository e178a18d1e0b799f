/**
 * The sandbox's people as the Cloud API names them since business-scoped user ids: every person
 * has a BSUID (`user_id`: their ISO 3166 alpha-2 country, a period, and digits), sent on every
 * inbound message (`messages[].from_user_id`, `contacts[].user_id`) and on every status
 * (`recipient_user_id`); a person who uses a username comes without a phone (no `from`, no
 * `wa_id`, no `recipient_id`) and with `contacts[].profile.username`; a send may address a person
 * by `recipient` (their BSUID) instead of `to`.
 *
 * The sandbox derives a phone person's BSUID from their number (the same person, the same BSUID,
 * as for one business portfolio); a username person's is given or derived from the username.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
 */
import { createHash } from 'node:crypto';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** A BSUID or parent BSUID, as the Cloud API writes it. */
export const BSUID_PATTERN = '^[A-Z]{2}\\.(ENT\\.)?[A-Za-z0-9]{1,128}$';
const BSUID = new RegExp(BSUID_PATTERN);

/** Whether `value` is a BSUID (never a phone number: it starts with letters). */
export const isBsuid = (value: string): boolean => BSUID.test(value);

/** 20 decimal digits from `seed`, stable. */
function digits(seed: string): string {
  const hash = createHash('sha256').update(`sandbox-bsuid:${seed}`).digest();
  return hash.readBigUInt64BE(0).toString().padStart(20, '1').slice(0, 20);
}

/** The BSUID of the person with phone `waId` (digits without `+`). */
export function bsuidOfPhone(waId: string): string {
  const country = parsePhoneNumberFromString(`+${waId}`)?.country ?? 'US';
  return `${country}.${digits(`phone:${waId}`)}`;
}

/** The BSUID of a username person who gave none (US, as the sandbox has no country for them). */
export function bsuidOfUsername(username: string): string {
  return `US.${digits(`username:${username}`)}`;
}

/** The BSUID a person gets when theirs changes from `previous` (same country), stable. */
export function nextBsuid(previous: string): string {
  return `${previous.slice(0, 2)}.${digits(`next:${previous}`)}`;
}
