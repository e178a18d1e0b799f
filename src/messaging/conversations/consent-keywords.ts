/**
 * Opt-out and opt-in keywords: an inbound text that is, once normalised ({@link keywordOf}:
 * NFKC, without the white space, punctuation and emoji around it, upper-cased), one of the
 * portal's opt-out keywords (by default STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT) sets
 * the contact's consent to `opted_out`, source `keyword`, recording the message in the consent
 * history and emitting `contact.opted_out`; an opt-in keyword (START, UNSTOP) sets `opted_in`.
 * When the consent changed and the portal has a confirmation reply for it, that reply is sent
 * as free text through the send path, after the inbound message's transaction committed (the
 * person's message opened the service window; the opt-out confirmation is the one text a person
 * who opted out receives).
 *
 * @see docs/messaging.md "Opt-out keywords"
 */
import { setConsent, type OptedOutStep } from '../../contacts/contacts-lookup.ts';
import type { Tx } from '../store/messages-repository.ts';
import type { SendMessageResult } from '../store/messaging-types.ts';
import type { SendMessageBody } from '../store/messages-schemas.ts';
import { keywordOf, messagingSettings, type MessagingSettings } from './messaging-settings.ts';

export type KeywordConsent = 'opted_out' | 'opted_in';

/** An inbound message as the keyword step needs it. */
export interface KeywordMessage {
  portalId: number;
  /** Our id of the inbound message (`msg_…`). */
  messageId: string;
  contactId: string | null;
  /** The business number written to (the reply goes from it). */
  phoneNumberId: string;
  type: string;
  /** The text's body (`text` messages); anything else is no keyword. */
  text?: string | null | undefined;
}

/** What the step did, and the reply to send once the transaction committed (if any). */
export interface KeywordOutcome {
  consent: KeywordConsent;
  changed: boolean;
  reply: { portalId: number; contactId: string; phoneNumberId: string; body: string } | null;
}

/** Which consent a text asks for under `settings`, if it is a keyword. */
export function keywordConsent(
  text: string,
  settings: Pick<MessagingSettings, 'optOutKeywords' | 'optInKeywords'>,
): KeywordConsent | null {
  const word = keywordOf(text);
  if (word === '') return null;
  if (settings.optOutKeywords.includes(word)) return 'opted_out';
  if (settings.optInKeywords.includes(word)) return 'opted_in';
  return null;
}

/**
 * The keyword step of an inbound message, in the transaction that stores it.
 *
 * @param optedOutSteps the opt-out steps (the webhooks' `contact.opted_out`).
 * @returns null when the message is no keyword (or has no contact); else the outcome.
 */
export async function applyConsentKeyword(
  tx: Tx,
  optedOutSteps: readonly OptedOutStep[],
  message: KeywordMessage,
): Promise<KeywordOutcome | null> {
  if (message.type !== 'text' || !message.text || message.contactId === null) return null;
  // A keyword is one word: longer texts are not read against the settings.
  if (message.text.length > 64) return null;
  const settings = await messagingSettings(tx, message.portalId);
  const consent = keywordConsent(message.text, settings);
  if (!consent) return null;
  const changed = await setConsent(tx, optedOutSteps, {
    portalId: message.portalId,
    contactId: message.contactId,
    to: consent,
    source: 'keyword',
    messageId: message.messageId,
  });
  const body = consent === 'opted_out' ? settings.optOutReply : settings.optInReply;
  return {
    consent,
    changed,
    reply:
      changed && body !== null
        ? {
            portalId: message.portalId,
            contactId: message.contactId,
            phoneNumberId: message.phoneNumberId,
            body,
          }
        : null,
  };
}

/** The send path as the reply uses it (messaging's own `sendMessage`). */
export type ReplySend = (args: {
  principal: { portalId: number };
  input: SendMessageBody;
  optOutConfirmation?: boolean;
}) => Promise<SendMessageResult>;

/**
 * Send the confirmation reply of `outcome` (after the inbound message's transaction
 * committed), from the number the person wrote to.
 *
 * @returns the queued message's id, or null when there is no reply.
 * @throws what the send path throws (e.g. `insufficient_credit`); the caller logs it.
 */
export async function sendKeywordReply(
  send: ReplySend,
  outcome: KeywordOutcome | null,
): Promise<string | null> {
  if (!outcome?.reply) return null;
  const { portalId, contactId, phoneNumberId, body } = outcome.reply;
  const result = await send({
    principal: { portalId },
    input: { contactId, from: phoneNumberId, type: 'text', text: { body } },
    optOutConfirmation: outcome.consent === 'opted_out',
  });
  return result.body.data.id;
}
