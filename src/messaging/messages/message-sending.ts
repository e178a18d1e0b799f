/**
 * Sending: the checks (send-rules.ts), then — in one transaction — the `Idempotency-Key` claim,
 * the message row, the credit reservation (402 when it does not cover the price) and the
 * delivery job. All or nothing: a refusal leaves no row, no reservation, no job and no key.
 *
 * @see docs/messaging.md "Sending"
 * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/
 */
import type { Database } from '../../db/client.ts';
import { claimOrReplay, requestFingerprint } from '../../idempotency/idempotency-keys.ts';
import {
  findIdempotencyKey,
  saveIdempotentResponse,
} from '../../idempotency/idempotency-repository.ts';
import { randomBase62 } from '../../platform/crypto.ts';
import { AppError } from '../../platform/errors.ts';
import { reserve } from '../credit/credit-ledger.ts';
import type { DeliveryQueue } from '../delivery/delivery-queue.ts';
import { toMessage } from './message-view.ts';
import { insertMessage, type Tx } from './messages-repository.ts';
import type { SendMessageBody } from './messages-schemas.ts';
import type { MessagingEventSteps } from '../provider-webhooks/status-events.ts';
import type { PortalOf, SendMessageResult } from '../messaging-types.ts';
import { checkSend, type CheckedSend, type SendRulesProvider } from './send-rules.ts';

/** Prices per message kind, integer minor units of `currency` (config MESSAGING_PRICE_*). */
export interface MessagingPrices {
  currency: string;
  text: number;
  MARKETING: number;
  UTILITY: number;
  AUTHENTICATION: number;
}

/** Public message id: `msg_` + base62 of 16 random bytes. */
export function newMessageId(): string {
  return `msg_${randomBase62(16)}`;
}

const SEND_ROUTE = 'POST /messaging/messages';

/** `sendMessage` over its dependencies (see messaging-types.ts for its contract). */
export function createSendMessage(deps: {
  db: Database;
  provider: SendRulesProvider;
  queue: Pick<DeliveryQueue, 'enqueue'>;
  prices: MessagingPrices;
  now: () => Date;
  /** Run in the send's transaction after a reservation lowered the available credit. */
  creditReserved?: MessagingEventSteps['creditReserved'] | undefined;
}) {
  const { db, provider, queue, prices, now } = deps;
  const priceOf = (c: CheckedSend) => (c.template ? prices[c.template.category] : prices.text);

  async function queueIt(
    tx: Tx,
    portalId: number,
    checked: CheckedSend,
    key: { idempotencyKey: string | undefined; requestHash: string },
  ): Promise<SendMessageResult> {
    if (key.idempotencyKey !== undefined) {
      const first = await claimOrReplay(tx, portalId, key.idempotencyKey, key.requestHash);
      if (first)
        return {
          status: first.status,
          body: first.body as SendMessageResult['body'],
          replayed: true,
        };
    }
    const id = newMessageId();
    const price = priceOf(checked);
    const row = await insertMessage(tx, {
      id,
      portalId,
      to: checked.to,
      contactId: checked.contactId,
      from: checked.from,
      type: checked.type,
      textBody: checked.textBody,
      templateName: checked.template?.name ?? null,
      templateLanguage: checked.template?.language ?? null,
      templateCategory: checked.template?.category ?? null,
      templateParameters: checked.template?.parameters ?? null,
      priceMinor: price,
      currency: prices.currency,
    });
    await queue.enqueue(tx, { messageId: id, portalId });
    const result = {
      status: 202,
      body: { success: true as const, data: toMessage(row) },
      replayed: false,
    };
    if (key.idempotencyKey !== undefined)
      await saveIdempotentResponse(tx, portalId, key.idempotencyKey, result);
    // Last: the credit row is the portal's one hot row, so its lock is held only for this
    // UPDATE and the commit (a refusal rolls everything above back).
    const money = {
      portalId,
      amount: price,
      currency: prices.currency,
      messageId: id,
      actor: 'api',
    };
    const reserved = await reserve(tx, money);
    if (reserved === false) {
      throw new AppError(
        'insufficient_credit',
        "The portal's credit does not cover this message; ask your operator to top it up.",
      );
    }
    if (reserved && deps.creditReserved)
      await deps.creditReserved(tx, portalId, {
        availableBefore: reserved.availableAfter + price,
        availableAfter: reserved.availableAfter,
        currency: prices.currency,
      });
    return result;
  }

  async function sendMessage(args: {
    principal: PortalOf;
    input: SendMessageBody;
    idempotencyKey?: string | undefined;
  }): Promise<SendMessageResult> {
    const { portalId } = args.principal;
    const requestHash = requestFingerprint(SEND_ROUTE, args.input);
    if (args.idempotencyKey !== undefined) {
      // A retry of a request already answered replays it, whatever the checks would say now.
      const earlier = await findIdempotencyKey(db, portalId, args.idempotencyKey);
      if (earlier && earlier.responseStatus !== null && earlier.expiresAt > now()) {
        const replay = await db.transaction((tx) =>
          claimOrReplay(tx, portalId, args.idempotencyKey!, requestHash),
        );
        if (replay)
          return {
            status: replay.status,
            body: replay.body as SendMessageResult['body'],
            replayed: true,
          };
      }
    }
    const checked = await checkSend({
      db,
      provider,
      portalId,
      input: args.input,
      now: now(),
    });
    return db.transaction((tx) =>
      queueIt(tx, portalId, checked, { idempotencyKey: args.idempotencyKey, requestHash }),
    );
  }
  return sendMessage;
}
