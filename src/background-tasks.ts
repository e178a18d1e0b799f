/**
 * The one list of periodic background tasks (jobs/background-work.ts runs them, once per period
 * across every instance; `npm run cli -- tasks list` shows them). A composition root beside
 * `services.ts`: each entry names a feature's periodic step.
 *
 * @see docs/decisions/0032-background-tasks.md
 */
import type { Database } from './db/client.ts';
import {
  createBackgroundWork,
  type BackgroundTask,
  type BackgroundWork,
} from './jobs/background-work.ts';
import {
  SWEEP_INTERVAL_MS,
  type ConversationsService,
} from './messaging/conversations/conversations-service.ts';
import type { Logger } from './platform/logger.ts';
import { AUTO_CLOSE_CHECK_MS, closeDueTickets } from './tickets/ticket-auto-close.ts';
import type { TicketEventSteps } from './tickets/ticket-events.ts';

export function createBackgroundTasks(deps: {
  db: Database;
  logger: Logger;
  instanceId: string;
  ticketSteps: TicketEventSteps;
  conversations: Pick<ConversationsService, 'sweep'>;
  /** The token health checks, when a provider is configured (partner-service.ts). */
  healthCheck: BackgroundTask | null;
}): BackgroundWork {
  const tasks: BackgroundTask[] = [
    {
      name: 'tickets.auto-close',
      description: 'close the tickets solved 7 days ago, of every portal',
      everyMs: AUTO_CLOSE_CHECK_MS,
      run: () => closeDueTickets(deps.db, deps.ticketSteps, null),
    },
    {
      name: 'conversations.sweep',
      description: 'announce service windows closing within the hour; erase expired content',
      everyMs: SWEEP_INTERVAL_MS,
      run: async () => {
        const done = await deps.conversations.sweep();
        return done.windowsClosing + done.expired.inbound + done.expired.outbound;
      },
    },
    ...(deps.healthCheck ? [deps.healthCheck] : []),
  ];
  return createBackgroundWork({ ...deps, tasks });
}
