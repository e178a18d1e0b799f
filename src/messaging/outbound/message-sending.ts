/**
 * Sending: the checks (send-rules.ts), then the price held from this instance's escrow block
 * (credit-escrow.ts; 402 when the portal's credit does not cover it, before anything is
 * written), then the message, its reservation and its delivery job in ONE statement
 * (message-insert.ts). All or nothing: a refusal leaves no row, no reservation, no job and no
 * key. With an `Idempotency-Key`, or when the send may take the credit below the `credit.low`
 * threshold, that statement runs in a transaction with the key's claim and response, or with
 * the exact credit check and its event.
 *
 * @see docs/messaging.md "Sending"
 * @see docs/decisions/0026-credit-escrow.md
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
import type { CreditEscrow, Hold } from '../credit/credit-escrow.ts';
import { lockCreditZone } from '../credit/credit-leases.ts';
import { readCredit } from '../credit/credit-ledger.ts';
import { MESSAGE_TYPES } from '../../db/schema/messages.ts';
import { contentFields, outboundContentOf, toMessage } from '../store/message-view.ts';
import {
  sealContent,
  type ContentKeyring,
  type OutboundContent,
} from '../store/message-content.ts';
import { findMessage } from '../store/messages-repository.ts';
import { insertQueuedMessage, type QueuedMessage } from './message-insert.ts';
import type { SendMessageBody } from '../store/send-kinds-schemas.ts';
import type { MessagingEvents } from '../events/messaging-events.ts';
import type { PortalOf, SendMessageResult } from '../store/messaging-types.ts';
import { checkSend, type CheckedSend, type SendRulesProvider } from './send-rules.ts';
import { assertWithinMessagingLimit, type BusinessInitiated } from './messaging-limit.ts';

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

/** The block under a hold was settled before its statement: lease again (nothing written). */
class LeaseClosed extends Error {}

/** Blocks one send may find settled under it before it gives up. */
const MAX_LEASE_RETRIES = 8;

const insufficientCredit = () =>
  new AppError(
    'insufficient_credit',
    "The portal's credit does not cover this message; ask your operator to top it up.",
  );

interface SendDeps {
  db: Database;
  /** Seals the message's content for its row (message-content.ts). */
  keyring: ContentKeyring;
  provider: SendRulesProvider;
  /** The delivery queue (delivery-queue.ts), woken once a queued message has committed. */
  queue: { wake(): void };
  escrow: CreditEscrow;
  prices: MessagingPrices;
  now: () => Date;
  /**
   * Where `credit.reserved` is emitted, in the send's transaction, when its reservation may have
   * lowered the available credit below the `credit.low` threshold (a zone hold, credit-escrow.ts).
   */
  events?: MessagingEvents | undefined;
}

interface KeyOf {
  idempotencyKey: string | undefined;
  requestHash: string;
}

type SendBody = SendMessageResult['body'];

/**
 * A response as the idempotency key keeps it: without what the message says (kept sealed only;
 * a template keeps its name and language).
 */
function withoutContent(body: SendBody): SendBody {
  const data: Record<string, unknown> = { ...body.data };
  for (const key of MESSAGE_TYPES) delete data[key];
  delete data.context;
  const { template } = body.data;
  return {
    ...body,
    data: {
      ...(data as SendBody['data']),
      ...(template && {
        template: { name: template.name, language: template.language, parameters: [] },
      }),
    },
  };
}

/** A stored first response, its content read again from the message (absent once erased). */
async function replayOf(
  deps: Pick<SendDeps, 'keyring'>,
  db: Parameters<typeof findMessage>[0],
  portalId: number,
  first: { status: number; body: unknown },
): Promise<SendMessageResult> {
  const body = first.body as SendBody;
  const row = await findMessage(db, portalId, body.data.id);
  const data = row
    ? { ...body.data, ...contentFields(row, outboundContentOf(deps.keyring, row)) }
    : body.data;
  return { status: first.status, body: { ...body, data }, replayed: true };
}

function messageOf(
  keyring: ContentKeyring,
  portalId: number,
  checked: CheckedSend,
  price: number,
  currency: string,
): QueuedMessage {
  const id = newMessageId();
  const content = checked.content;
  return {
    id,
    portalId,
    waId: checked.to,
    contactId: checked.contactId,
    phoneNumberId: checked.from,
    type: checked.type,
    templateName: checked.template?.name ?? null,
    templateLanguage: checked.template?.language ?? null,
    templateCategory: checked.template?.category ?? null,
    content: content === null ? null : sealContent(keyring, portalId, id, content),
    priceMinor: price,
    currency,
  };
}

/** The statement, on the database or in a transaction; throws LeaseClosed when nothing was written. */
async function insert(
  db: Parameters<typeof insertQueuedMessage>[0],
  m: QueuedMessage,
  hold: Hold | null,
  clear: OutboundContent | null,
): Promise<SendMessageResult> {
  const outcome = await insertQueuedMessage(
    db,
    m,
    hold ? { leaseId: hold.leaseId, actor: 'api' } : null,
  );
  if (outcome.kind === 'lease_closed') throw new LeaseClosed();
  return {
    status: 202,
    body: { success: true, data: toMessage(outcome.row, clear) },
    replayed: false,
  };
}

/** One attempt with one hold: the statement alone, or in a transaction when it needs one. */
async function queueOnce(
  deps: SendDeps,
  m: QueuedMessage,
  clear: OutboundContent | null,
  hold: Hold | null,
  key: KeyOf,
  limited: BusinessInitiated | null,
): Promise<SendMessageResult> {
  const { db } = deps;
  const { portalId } = m;
  if (key.idempotencyKey === undefined && !hold?.zone && !limited)
    return insert(db, m, hold, clear);
  return db.transaction(async (tx) => {
    if (key.idempotencyKey !== undefined) {
      const first = await claimOrReplay(tx, portalId, key.idempotencyKey, key.requestHash);
      if (first) return replayOf(deps, tx, portalId, first);
    }
    // The portfolio's messaging limit, before the statement that reserves the credit (429
    // `messaging_limit_reached`: nothing written). Its lock is taken before the credit zone's.
    if (limited) await assertWithinMessagingLimit(tx, portalId, limited, deps.now());
    // One zone send of the portal at a time, each seeing the ones before it committed.
    if (hold?.zone) await lockCreditZone(tx, portalId);
    const result = await insert(tx, m, hold, clear);
    if (key.idempotencyKey !== undefined)
      await saveIdempotentResponse(tx, portalId, key.idempotencyKey, {
        status: result.status,
        body: withoutContent(result.body),
      });
    if (hold?.zone && deps.events && deps.events.listenerCount('credit.reserved') > 0) {
      const credit = await readCredit(tx, portalId, m.currency);
      const availableAfter = credit.balance - credit.reserved;
      await deps.events.emitSerial('credit.reserved', {
        tx,
        portalId,
        availableBefore: availableAfter + m.priceMinor,
        availableAfter,
        currency: credit.currency,
      });
    }
    return result;
  });
}

/** `sendMessage` over its dependencies (see messaging-types.ts for its contract). */
export function createSendMessage(deps: SendDeps) {
  const { db, provider, prices, now } = deps;
  const priceOf = (c: CheckedSend) => (c.template ? prices[c.template.category] : prices.text);

  async function queueIt(
    portalId: number,
    checked: CheckedSend,
    key: KeyOf,
  ): Promise<SendMessageResult> {
    const price = priceOf(checked);
    for (let attempt = 0; ; attempt++) {
      const hold = price > 0 ? await deps.escrow.hold(portalId, price) : null;
      if (price > 0 && !hold) throw insufficientCredit();
      let result: SendMessageResult;
      try {
        result = await queueOnce(
          deps,
          messageOf(deps.keyring, portalId, checked, price, prices.currency),
          checked.content,
          hold,
          key,
          checked.businessInitiated,
        );
      } catch (err) {
        if (err instanceof LeaseClosed) {
          hold?.lost();
          if (attempt < MAX_LEASE_RETRIES) continue;
          throw new AppError('unavailable', 'Credit could not be reserved; try again.');
        }
        // A refusal before the statement wrote nothing; any other failure may have committed.
        if (err instanceof AppError) hold?.unused();
        else hold?.done();
        throw err;
      }
      if (result.replayed) hold?.unused();
      else {
        hold?.done();
        // Committed: this instance's delivery worker takes it now rather than at its next look.
        deps.queue.wake();
      }
      return result;
    }
  }

  async function sendMessage(args: {
    principal: PortalOf;
    input: SendMessageBody;
    idempotencyKey?: string | undefined;
    /** Internal: the reply confirming an opt-out keyword (docs/messaging.md). */
    optOutConfirmation?: boolean | undefined;
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
        if (replay) return replayOf(deps, db, portalId, replay);
      }
    }
    const checked = await checkSend({
      db,
      provider,
      portalId,
      input: args.input,
      now: now(),
      optOutConfirmation: args.optOutConfirmation,
    });
    return queueIt(portalId, checked, { idempotencyKey: args.idempotencyKey, requestHash });
  }
  return sendMessage;
}
