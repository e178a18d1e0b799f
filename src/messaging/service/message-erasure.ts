/**
 * Messaging's step of a contact's erasure (contacts/'s `ErasureStep`, given in services.ts):
 * the erased person's messages still queued fail with `recipient_erased` and their credit is
 * released; then every message of theirs (by contact or phone) keeps its status, times and price
 * for the portal's reports, but loses the phone, the text, the template parameters and the link;
 * every message the person wrote loses its content, their phone and the link, and its media
 * records go, and so do the webhook events that carried what they wrote.
 *
 * @see docs/messaging.md
 */
import type { ErasureStep } from '../../contacts/contacts-service.ts';
import type { DraftKeyring } from '../drafts/drafts-repository.ts';
import { removeFromDraftsOnErasure } from '../drafts/drafts-service.ts';
import { failQueuedOfErased } from '../store/message-failures.ts';
import { anonymiseMessagesOf } from '../store/messages-repository.ts';
import { deleteEventsOf, eraseInboundOf } from '../conversations/content-retention.ts';

/** @returns `failed` `queuedMessages` and `anonymised` `messageRecipients`, with their counts. */
const anonymiseMessagesOnErasure: ErasureStep = async (tx, contact) => {
  const failed = await failQueuedOfErased(tx, contact);
  return [
    { kind: 'failed', what: 'queuedMessages', count: failed.length },
    {
      kind: 'anonymised',
      what: 'messageRecipients',
      count: await anonymiseMessagesOf(tx, contact),
    },
    { kind: 'anonymised', what: 'inboundMessages', count: await eraseInboundOf(tx, contact) },
    { kind: 'erased', what: 'webhookEvents', count: await deleteEventsOf(tx, contact) },
  ];
};

/**
 * Messaging's steps of an erasure, in order: the messages (`anonymiseMessagesOnErasure`), then
 * the drafts (`removeFromDraftsOnErasure`, which opens and re-seals them with `keyring`).
 */
export const messagingErasureSteps = (keyring: DraftKeyring): ErasureStep[] => [
  anonymiseMessagesOnErasure,
  removeFromDraftsOnErasure(keyring),
];
