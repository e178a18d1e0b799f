/**
 * What another feature may use of contacts/: the one module messaging imports from this folder
 * (a named edge in `.dependency-cruiser.cjs`). A send's checks read the recipient (by id or
 * phone: consent, last inbound message); a contact's erasure runs messaging's step. Every read and write names the portal.
 *
 * @see docs/architecture.md "The folders"
 */
export { newContactId } from './contact-id.ts';
export {
  findContact,
  findContactByPhone,
  findContactByWaUserId,
  recordInbound,
  type ContactRow,
} from './contacts-repository.ts';
export type { ErasureStep } from './contacts-service.ts';
export { normalisePhone, PHONE_INPUT_MAX } from './phone.ts';
export { isWaUserId, WA_USER_ID_MAX } from './wa-user-id.ts';
export { setConsent, type OptedOutStep } from './consent-steps.ts';
export { recordMarketingPreference, stoppedMarketing } from './marketing-preferences.ts';
