/**
 * The services of every feature, built once over one storage. Shared by the HTTP app, the
 * admin socket and the CLI, so that all three apply the same rules.
 */
import type { FastifyBaseLogger } from 'fastify';
import { createAccountsService, type AccountsService } from './accounts/accounts-service.ts';
import type { Config } from './config.ts';
import type { Storage } from './db/client.ts';
import { createTicketsService, type TicketsService } from './tickets/tickets-service.ts';

export interface Services {
  config: Config;
  storage: Storage;
  accounts: AccountsService;
  tickets: TicketsService;
}

export function createServices(deps: {
  config: Config;
  storage: Storage;
  logger: FastifyBaseLogger;
}): Services {
  const { config, storage, logger } = deps;
  const accounts = createAccountsService({ db: storage.db });
  const tickets = createTicketsService({
    db: storage.db,
    providerAppSecret: config.PROVIDER_APP_SECRET,
    logger,
  });
  return { config, storage, accounts, tickets };
}
