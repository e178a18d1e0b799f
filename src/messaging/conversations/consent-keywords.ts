/**
 * Opt-out and opt-in keywords: an inbound text that is, once normalised ({@link keywordOf}:
 * NFKC, without the white space, punctuation and emoji around it, upper-cased), one of the
 * portal's opt-out keywords (by default STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT) sets
 * the contact's consent to `opted_out`, source `keyword`, recording the message in the consent
 * history and emitting `contact.opted_out`; an opt-in keyword (START, UNSTOP) sets `opted_in`.
 * When the consent changed and the portal has a confirmation reply for it, that reply is sent
 * as free text through the {@link KeywordReplies} port, after the inbound message's transaction
 * committed (the person's message opened the service window; the opt-out confirmation is the
 * one text a person who opted out receives).
 *
 * The module listens to messaging's `inbound.text` event ({@link subscribeConsentKeywords}, at
 * composition in services.ts): the inbound ingestion does not know it, and it does not know the
 * send path.
 *
 * @see docs/messaging.md "Opt-out keywords"
 */
import { setConsent, type OptedOutStep } from '../../contacts/consent-steps.ts';
import type { Logger } from '../../platform/logger.ts';
import type { MessagingEvents } from '../events/messaging-events.ts';
import type { Tx } from '../store/messages-repository.ts';
import { keywordOf, messagingSettings, type MessagingSettings } from './messaging-settings.ts';

type KeywordConsent = 'opted_out' | 'opted_in';

/** An inbound message as the keyword step needs it. */
interface KeywordMessage {
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
interface KeywordOutcome {
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
async function applyConsentKeyword(
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

/**
 * The one thing the consent module asks of the send path: queue a keyword's confirmation reply
 * (free text, from the number the person wrote to). Implemented over the send path at
 * composition (service/messages-service.ts `keywordReplies`).
 */
export interface KeywordReplies {
  /**
   * Queue `reply` to the person (`optOut`: the confirmation of an opt-out, the one text a
   * person who opted out receives).
   *
   * @returns the queued message's id.
   * @throws what the send path throws (e.g. `insufficient_credit`); the caller logs it.
   */
  sendReply(reply: NonNullable<KeywordOutcome['reply']> & { optOut: boolean }): Promise<string>;
}

/**
 * Handle opt-out and opt-in keywords: on each `inbound.text`, in its transaction, apply the
 * keyword ({@link applyConsentKeyword}); once it committed, send the confirmation reply, if any
 * (a failure is logged with the portal and the error's code, never the text).
 *
 * @returns a function that stops listening.
 */
export function subscribeConsentKeywords(
  events: MessagingEvents,
  deps: {
    /** The opt-out steps every consent change runs (the webhooks' `contact.opted_out`). */
    optedOutSteps: readonly OptedOutStep[];
    /** Where confirmation replies go; without it none is sent. */
    replies?: KeywordReplies | undefined;
    logger: Logger;
  },
): () => void {
  const log = deps.logger.child({ component: 'consent-keywords' });
  return events.on('inbound.text', async ({ tx, text, afterCommit }) => {
    const outcome = await applyConsentKeyword(tx, deps.optedOutSteps, {
      portalId: text.portalId,
      messageId: text.messageId,
      contactId: text.contactId,
      phoneNumberId: text.phoneNumberId,
      type: 'text',
      text: text.body,
    });
    const reply = outcome?.reply;
    const replies = deps.replies;
    if (!reply || !replies) return;
    afterCommit(async () => {
      await replies
        .sendReply({ ...reply, optOut: outcome.consent === 'opted_out' })
        .catch((err: unknown) =>
          log.warn(
            { portalId: reply.portalId, code: (err as { code?: string }).code },
            'the keyword confirmation could not be sent',
          ),
        );
    });
  });
}
