/**
 * The delivery worker: takes `message.send` jobs, paces each sender number, sends through the
 * provider and records the outcome (docs/messaging.md "Delivery and pacing").
 *
 * Per job: a message no longer `queued`, or already holding a wamid, is done (a retried or
 * re-taken job never sends twice once the wamid is recorded). Otherwise it waits for its
 * number's slot and sends; the provider's answer (the wamid) is written BEFORE the job
 * completes. A retryable failure (`throttled`, `unavailable`) is handed back to pg-boss for a
 * retry with backoff until the retry limit; a final failure (`rejected` and the rest, an
 * inactive connection) fails the message and releases its credit in one transaction.
 *
 * Where a duplicate can still happen: a crash (or a database failure) after the provider
 * accepted a message and before its wamid is written; the job is taken again and the message
 * is sent again (docs/decisions/0016-messaging.md).
 */
import { setMaxListeners } from 'node:events';
import type { Database } from '../../db/client.ts';
import { ConnectionInactiveError, ProviderError } from '../../partner/partner-service.ts';
import type { Logger } from '../../platform/logger.ts';
import type { SendJob } from './delivery-queue.ts';
import { failQueuedMessage, INACTIVE_ERROR } from '../messages/message-failures.ts';
import {
  findMessageForDelivery,
  recordProviderMessageId,
  type MessageRow,
} from '../messages/messages-repository.ts';
import type { OutboundMessage, ProviderAdapter } from '../provider/provider-adapter.ts';
import type { SenderPacing } from './sender-pacing.ts';
import type { ContentKeyring, OutboundContent } from '../messages/message-content.ts';
import { outboundContentOf } from '../messages/message-view.ts';
import { recordOutboundInConversation } from '../messages/outbound-conversation.ts';
import {
  CONTENT_ERASED,
  contextOf,
  freeFormOutbound,
  resolveProviderIds,
  TARGET_UNAVAILABLE,
  type ProviderIds,
} from './outbound-wire.ts';
import { templateWireComponents } from '../templates/template-wire.ts';

/** What became of one job. */
export type JobOutcome = 'sent' | 'skipped' | 'retry' | 'failed';

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
    to: row.to,
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

  async function deliver(job: SendJob, signal: AbortSignal): Promise<JobOutcome> {
    const row = await findMessageForDelivery(db, job.data.messageId);
    if (!row || row.status !== 'queued' || row.providerMessageId !== null) return 'skipped';
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
    await pacing.take(row.from, signal);
    try {
      // The wamid is recorded inside the send, before a revocation waiting for it goes on.
      await provider.sendMessage(row.portalId, row.from, message, row.id, (wamid) =>
        recordProviderMessageId(db, row.id, wamid),
      );
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
      if (retryable && job.retryCount < job.retryLimit) return 'retry';
      await failQueuedMessage(db, row.id, errorOf(err));
      return 'failed';
    }
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
                messageId: job.data.messageId,
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
