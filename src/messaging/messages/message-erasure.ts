/**
 * Messaging's step of a contact's erasure (contacts/'s `ErasureStep`, given in services.ts):
 * the erased person's messages keep their status, times and price for the portal's reports, but
 * lose the phone, the text and the link to the contact.
 *
 * @see docs/messaging.md
 */
import type { ErasureStep } from '../../contacts/contacts-lookup.ts';
import { anonymiseMessagesOf } from './messages-repository.ts';

/** @returns `anonymised` `messageRecipients` and how many messages it stripped. */
export const anonymiseMessagesOnErasure: ErasureStep = async (tx, contact) => ({
  kind: 'anonymised',
  what: 'messageRecipients',
  count: await anonymiseMessagesOf(tx, contact),
});
