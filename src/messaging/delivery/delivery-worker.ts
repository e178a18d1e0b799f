/**
 * The delivery worker: takes `message.send` jobs, paces each sender number, sends through the
 * provider and records the outcome (docs/messaging.md "Delivery").
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
 * is sent again (docs/decisions.md "Messaging: at least once").
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
import { findSendableMedium } from '../media/outbound-media.ts';
import {
  MediumUnavailableError,
  templateWireComponents,
  type ProviderMediaIdOf,
} from '../templates/template-wire.ts';

/** What became of one job. */
export type JobOutcome = 'sent' | 'skipped' | 'retry' | 'failed';

/**
 * The Cloud API message of a row: text, or a template with its components (template-wire.ts).
 *
 * @throws MediumUnavailableError when a template's medium can no longer be sent.
 */
export async function outboundOf(
  row: MessageRow,
  content: OutboundContent | null,
  providerMediaId: ProviderMediaIdOf,
): Promise<OutboundMessage> {
  if (row.type === 'text')
    return { to: row.to, type: 'text', text: { body: content?.text?.body ?? '' } };
  const components = await templateWireComponents(content?.template, providerMediaId);
  return {
    to: row.to,
    type: 'template',
    template: {
      name: row.templateName ?? '',
      language: { code: row.templateLanguage ?? '' },
      ...(components.length > 0 && { components }),
    },
  };
}

/** The error of a template message whose medium expired (or was deleted) before it was sent. */
const MEDIUM_UNAVAILABLE_ERROR = {
  code: 'media_unavailable',
  title: 'A medium of the message expired or was deleted before it could be sent',
} as const;

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
    await pacing.take(row.from, signal);
    try {
      // The wamid is recorded inside the send, before a revocation waiting for it goes on.
      const content = outboundContentOf(deps.keyring, row);
      const mediaIdOf: ProviderMediaIdOf = async (id) =>
        (await findSendableMedium(db, row.portalId, id))?.providerMediaId ?? null;
      await provider.sendMessage(
        row.portalId,
        row.from,
        await outboundOf(row, content, mediaIdOf),
        row.id,
        (wamid) => recordProviderMessageId(db, row.id, wamid),
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
      if (err instanceof MediumUnavailableError) {
        await failQueuedMessage(db, row.id, MEDIUM_UNAVAILABLE_ERROR);
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
