/**
 * The one list of background work (jobs/background-work.ts runs it; `npm run cli -- tasks list`
 * shows it): every periodic task with its period, each run once per period across every
 * instance; then the background work that is not periodic, each with the reason. A composition
 * root beside `services.ts`: each entry names a feature's step.
 *
 * @see docs/decisions/0032-background-tasks.md
 */
import { KEY_USAGE_FLUSH_MS } from './accounts/key-usage.ts';
import { expireSessions } from './browser/session-store.ts';
import type { Config } from './config.ts';
import type { Database } from './db/client.ts';
import { expireIdempotencyKeys } from './idempotency/idempotency-repository.ts';
import {
  createBackgroundWork,
  type BackgroundTask,
  type BackgroundWork,
  type DeferredWork,
} from './jobs/background-work.ts';
import {
  SWEEP_INTERVAL_MS,
  type ConversationsService,
} from './messaging/conversations/conversations-service.ts';
import { settlementPeriodMs } from './messaging/outbound/delivery-settlement.ts';
import type { MessagingRuntime } from './messaging/service/messages-service.ts';
import { expireSignedRequests } from './partner/callbacks/signed-request-memory.ts';
import type { Logger } from './platform/logger.ts';
import { AUTO_CLOSE_CHECK_MS, closeDueTickets } from './tickets/ticket-auto-close.ts';
import type { TicketEventSteps } from './tickets/ticket-events.ts';
import { EVENT_SWEEP_INTERVAL_MS } from './webhooks/event-log-service.ts';
import type { WebhooksService } from './webhooks/webhooks-service.ts';

/** Period of the expiry tasks (sessions, idempotency keys, signed requests), in milliseconds. */
export const EXPIRY_INTERVAL_MS = 3_600_000;

export function createBackgroundTasks(deps: {
  db: Database;
  logger: Logger;
  instanceId: string;
  settings: Pick<Config, 'MESSAGING_SEND_CONFIRM_S' | 'MESSAGING_STATUS_WAIT_S'>;
  ticketSteps: TicketEventSteps;
  conversations: Pick<ConversationsService, 'sweep'>;
  messaging: Pick<MessagingRuntime, 'settle'>;
  webhooks: Pick<WebhooksService, 'sweepEvents'>;
  /** The token health checks, when a provider is configured (partner-service.ts). */
  healthCheck: BackgroundTask | null;
}): BackgroundWork {
  const { db } = deps;
  const tasks: BackgroundTask[] = [
    {
      name: 'tickets.auto-close',
      description: 'close the tickets solved 7 days ago, of every portal',
      everyMs: AUTO_CLOSE_CHECK_MS,
      run: () => closeDueTickets(db, deps.ticketSteps, null),
    },
    {
      name: 'conversations.sweep',
      description:
        'announce service windows closing within the hour; reopen snoozes that ended; erase expired content',
      everyMs: SWEEP_INTERVAL_MS,
      run: async () => {
        const done = await deps.conversations.sweep();
        return (
          done.windowsClosing + done.snoozesEnded + done.expired.inbound + done.expired.outbound
        );
      },
    },
    {
      name: 'messaging.settlement',
      description:
        'fail the messages the provider never confirmed or reported on; return stale credit blocks',
      everyMs: settlementPeriodMs({
        confirmS: deps.settings.MESSAGING_SEND_CONFIRM_S,
        statusWaitS: deps.settings.MESSAGING_STATUS_WAIT_S,
      }),
      run: async () => {
        const done = await deps.messaging.settle();
        return done.messages + done.blocks;
      },
    },
    {
      name: 'webhooks.event-retention',
      description: 'delete the events older than EVENTS_RETENTION_DAYS, with their deliveries',
      everyMs: EVENT_SWEEP_INTERVAL_MS,
      run: () => deps.webhooks.sweepEvents(),
    },
    {
      name: 'sessions.expire',
      description: 'delete the expired browser sessions of users and agents',
      everyMs: EXPIRY_INTERVAL_MS,
      run: () => expireSessions(db),
    },
    {
      name: 'idempotency.expire',
      description: 'delete the Idempotency-Key records past their 24 hours',
      everyMs: EXPIRY_INTERVAL_MS,
      run: () => expireIdempotencyKeys(db),
    },
    {
      name: 'partner.signed-requests-expire',
      description: "delete the provider callbacks' replay records once the request is stale",
      everyMs: EXPIRY_INTERVAL_MS,
      run: () => expireSignedRequests(db),
    },
    ...(deps.healthCheck ? [deps.healthCheck] : []),
  ];
  return createBackgroundWork({ ...deps, tasks, deferred: DEFERRED_WORK });
}

/** The background work that is not a periodic task, and why (shown by `tasks list`). */
const DEFERRED_WORK: readonly DeferredWork[] = [
  {
    name: 'message.send',
    runsOn: 'messages table',
    reason:
      "each queued message is its own job, claimed in batches by any instance's delivery worker under a lease (MESSAGING_JOB_EXPIRE_S); a throttled or failed call is retried with backoff (MESSAGING_RETRY_LIMIT, MESSAGING_RETRY_DELAY_S); a message out of attempts fails",
  },
  {
    name: 'message.statuses',
    runsOn: 'job queue',
    reason:
      "one job per provider webhook's statuses, applied by the instance that answered it right after the answer; every instance's status worker takes the jobs a stopped instance left, each job retried with backoff until applied (decision 40)",
  },
  {
    name: 'webhook.deliver',
    runsOn: 'job queue',
    reason:
      "one job per delivery attempt, taken by any instance's webhook worker; a failed attempt queues the next with its own backoff (startAfter), so each delivery keeps its own schedule",
  },
  {
    name: 'campaign.runner',
    runsOn: 'every instance',
    reason:
      "each instance's runner claims a running campaign's next one-second slot and its recipients in the database (SKIP LOCKED), so the pace holds across instances and a killed instance's recipients are claimed again after a minute",
  },
  {
    name: 'job-queue.maintenance',
    runsOn: 'job queue maintenance',
    reason:
      "pg-boss's own supervision (every MESSAGING_JOB_EXPIRE_S / 4 s, at least 5 s): expires the jobs of dead workers so they are taken again; pg-boss runs it once across instances",
  },
  {
    name: 'partner.grant-revocation',
    runsOn: 'every instance',
    reason:
      'revoking a released grant at the provider, retried after 1, 5 and 30 s in the memory of the instance that released it: the token is deleted from storage first and never stored again',
  },
  {
    name: 'accounts.key-usage-flush',
    runsOn: 'every instance',
    reason: `each instance writes the API key usage it counted in memory every ${KEY_USAGE_FLUSH_MS / 1000} s (and at shutdown): the counts exist only in that instance`,
  },
];
