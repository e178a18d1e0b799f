/**
 * The delivery worker: takes the batches of messages the delivery queue claims
 * (delivery-queue.ts), paces each sender number, sends through the provider and records the
 * outcome (docs/messaging.md "Delivery and pacing", "Retries and failures").
 *
 * The attempt protocol (docs/decisions/0034-delivery-idempotency.md): right before the
 * provider call the worker commits the message's send attempt (`send_attempted_at`), only on a
 * message still `queued`, without a wamid and without an earlier attempt. Then:
 * - the provider accepts: the wamid is written (inside the call) before the lease ends;
 * - the provider answers with a failure (nothing was sent): the attempt is cleared and a
 *   retryable failure (`throttled`, `unavailable`) is handed back to the queue for a retry with
 *   backoff until the retry limit, honouring the provider's `Retry-After` on the sender number;
 *   a final failure (`rejected` and the rest, an inactive connection) fails the message and
 *   releases its credit in one transaction;
 * - no answer (a timeout, a lost connection, this process killed): the outcome is unknown, the
 *   attempt stays, and no worker ever calls the provider for this message again. A claim that
 *   finds such an attempt ends without sending ("held"); the message's status webhook
 *   (matched by its `biz_opaque_callback_data`) records its wamid and status, or the settlement
 *   sweep (delivery-settlement.ts) fails it after `MESSAGING_SEND_CONFIRM_S`.
 *
 * So the provider is called at most once per message: a crash between the provider's accept and
 * the record never sends the message twice.
 *
 * The attempts and the wamids of the messages in flight are written in batches: each write
 * waits for the statement that carries it (one at a time; those that arrive meanwhile go in the
 * next), so the protocol is the same as one statement per message.
 */
import { setMaxListeners } from 'node:events';
import type { Database } from '../../db/client.ts';
import { ConnectionInactiveError } from '../../partner/connections-store.ts';
import { ProviderError } from '../../partner/provider-error.ts';
import type { Logger } from '../../platform/logger.ts';
import { beginSendAttempts, recordProviderMessageIds, type SendJob } from './delivery-queue.ts';
import { failQueuedMessage, INACTIVE_ERROR } from '../store/message-failures.ts';
import { clearSendAttempt, type MessageRow } from '../store/messages-repository.ts';
import type { OutboundMessage, ProviderAdapter } from '../provider/provider-adapter.ts';
import type { SenderPacing } from './sender-pacing.ts';
import type { ContentKeyring, OutboundContent } from '../store/message-content.ts';
import { outboundContentOf } from '../store/message-view.ts';
import { recordOutboundInConversation } from './outbound-conversation.ts';
import {
  CONTENT_ERASED,
  contextOf,
  freeFormOutbound,
  resolveProviderIds,
  TARGET_UNAVAILABLE,
  type ProviderIds,
} from './outbound-wire.ts';
import { templateWireComponents } from '../templates/template-wire.ts';

/**
 * Coalesce concurrent calls into one statement: `run` gets the items that arrived while the
 * previous statement ran (at most `max`), and each call resolves with its own item's result.
 */
function coalescer<T, R>(
  run: (items: T[]) => Promise<(item: T) => R>,
  max = 500,
): (item: T) => Promise<R> {
  let pending: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  let busy = false;
  const flush = async (): Promise<void> => {
    if (busy || pending.length === 0) return;
    busy = true;
    const batch = pending.slice(0, max);
    pending = pending.slice(max);
    try {
      const resultOf = await run(batch.map((p) => p.item));
      for (const p of batch) p.resolve(resultOf(p.item));
    } catch (err) {
      for (const p of batch) p.reject(err);
    } finally {
      busy = false;
      void flush();
    }
  };
  return (item) =>
    new Promise<R>((resolve, reject) => {
      pending.push({ item, resolve, reject });
      if (!busy) queueMicrotask(() => void flush());
    });
}

/**
 * What became of one job: `held` is a message whose send attempt has an unknown outcome, left
 * to its status webhook or the settlement sweep (the job completes).
 */
type JobOutcome = 'sent' | 'skipped' | 'retry' | 'failed' | 'held';

/**
 * The Cloud API message of a row: a free-form kind (outbound-wire.ts), or a template with its
 * components (template-wire.ts); null when a free-form message's content is gone.
 */
export function outboundOf(
  row: MessageRow,
  content: OutboundContent | null,
  ids: ProviderIds,
): OutboundMessage | null {
  if (row.type !== 'template') return freeFormOutbound(row, content, ids);
  const components = templateWireComponents(content?.template, (id) => ids.media.get(id));
  return {
    to: row.waId,
    type: 'template',
    ...contextOf(content, ids),
    template: {
      name: row.templateName ?? '',
      language: { code: row.templateLanguage ?? '' },
      ...(components.length > 0 && { components }),
    },
  };
}

/** A provider failure's code and title as a message's `error`. */
function errorOf(err: ProviderError): { code: string; title: string } {
  return { code: err.graphCode === undefined ? err.kind : String(err.graphCode), title: err.title };
}

export function createDeliveryWorker(deps: {
  db: Database;
  /** Opens the message's sealed content for the provider call (message-content.ts). */
  keyring: ContentKeyring;
  provider: Pick<ProviderAdapter, 'sendMessage'>;
  pacing: SenderPacing;
  logger: Logger;
}) {
  const { db, provider, pacing } = deps;
  const log = deps.logger.child({ component: 'delivery-worker' });
  /** The attempt of one message, committed with those of the others in flight. */
  const beginAttempt = coalescer<string, boolean>(async (ids) => {
    const begun = await beginSendAttempts(db, ids, new Date());
    return (id) => begun.has(id);
  });
  /** The wamid of one message, written with those of the others in flight. */
  const recordWamid = coalescer<{ id: string; wamid: string }, void>(async (accepted) => {
    await recordProviderMessageIds(db, accepted);
    return () => undefined;
  });

  async function deliver(job: SendJob, signal: AbortSignal): Promise<JobOutcome> {
    const { row } = job;
    if (row.status !== 'queued' || row.providerMessageId !== null) return 'skipped';
    if (row.sendAttemptedAt !== null) return held(row);
    const content = outboundContentOf(deps.keyring, row);
    const ids = await resolveProviderIds(db, row, content);
    if (ids === 'retry') {
      // A reaction or quote waits for its message's wamid, within the job's retries.
      if (job.retryCount < job.retryLimit) return 'retry';
      await failQueuedMessage(db, row.id, TARGET_UNAVAILABLE);
      return 'failed';
    }
    const message = 'error' in ids ? null : outboundOf(row, content, ids);
    if (!message) {
      await failQueuedMessage(db, row.id, 'error' in ids ? ids.error : CONTENT_ERASED);
      return 'failed';
    }
    await pacing.take(row.phoneNumberId, signal);
    try {
      // The attempt is committed right before the request; the wamid is recorded inside the
      // send, before a revocation waiting for it goes on.
      const sent = await provider.sendMessage(row.portalId, row.phoneNumberId, message, row.id, {
        beforeSend: () => beginAttempt(row.id),
        onAccepted: (wamid) => recordWamid({ id: row.id, wamid }),
      });
      // Another worker's attempt came first (this job was taken over meanwhile).
      if (sent === null) return 'skipped';
      // Sent is sent: a failure here must not retry the job (the person would get it twice).
      await recordOutboundInConversation(db, row).catch((err: unknown) =>
        log.warn(
          { messageId: row.id, error: err instanceof Error ? err.name : typeof err },
          'the conversation could not be updated',
        ),
      );
      return 'sent';
    } catch (err) {
      if (err instanceof ConnectionInactiveError) {
        await failQueuedMessage(db, row.id, INACTIVE_ERROR);
        return 'failed';
      }
      if (!(err instanceof ProviderError)) throw err;
      if (err.outcomeUnknown) return held(row, err);
      const retryable = err.kind === 'throttled' || err.kind === 'unavailable';
      log.warn(
        {
          portalId: row.portalId,
          messageId: row.id,
          attempt: job.retryCount + 1,
          ...err.logFields(),
        },
        retryable ? 'message send failed; will retry' : 'message send refused',
      );
      if (retryable && job.retryCount < job.retryLimit) {
        // The provider answered: nothing was sent, so the retry may call it again.
        await clearSendAttempt(db, row.id);
        if (err.retryAfterMs !== undefined) pacing.pause(row.phoneNumberId, err.retryAfterMs);
        return 'retry';
      }
      await failQueuedMessage(db, row.id, errorOf(err));
      return 'failed';
    }
  }

  /** A message whose send attempt has no known outcome: never sent again (see the module). */
  function held(row: MessageRow, err?: ProviderError): 'held' {
    log.warn(
      { portalId: row.portalId, messageId: row.id, ...err?.logFields() },
      'message send attempt without an outcome; not sent again, waiting for its status',
    );
    return 'held';
  }

  const controller = new AbortController();
  // Every pacing wait listens on this one signal: many at once are expected.
  setMaxListeners(0, controller.signal);
  return {
    /**
     * Deliver a batch concurrently (each job paced by its sender number).
     *
     * @returns the jobs to retry later; an unexpected error (storage) retries its job too.
     */
    async handle(jobs: SendJob[]): Promise<{ retry: SendJob[]; outcomes: JobOutcome[] }> {
      const outcomes = await Promise.all(
        jobs.map((job) =>
          deliver(job, controller.signal).catch((err: unknown) => {
            log.error(
              {
                messageId: job.row.id,
                error: err instanceof Error ? err.name : typeof err,
              },
              'message delivery failed unexpectedly; will retry',
            );
            return 'retry' as const;
          }),
        ),
      );
      return { retry: jobs.filter((_, i) => outcomes[i] === 'retry'), outcomes };
    },
    /** Abort the pacing waits in progress (shutdown): their jobs are retried. */
    abort: () => controller.abort(),
  };
}
