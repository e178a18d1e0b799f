/**
 * The services of every feature, built once over one storage. Shared by the HTTP app, the
 * admin socket and the CLI, so that all three apply the same rules.
 */
import type { FastifyBaseLogger } from 'fastify';
import { createAccountsService, type AccountsService } from './accounts/accounts-service.ts';
import type { Config } from './config.ts';
import type { Storage } from './db/client.ts';
import { createPartnerService, type PartnerService } from './partner/partner-service.ts';
import { loadKeyring } from './platform/keyring.ts';
import { createSessionStore, type SessionStore } from './web/session-store.ts';

export interface Services {
  config: Config;
  storage: Storage;
  accounts: AccountsService;
  partner: PartnerService;
  /** Browser sessions of the web pages. */
  sessions: SessionStore;
}

export function createServices(deps: {
  config: Config;
  storage: Storage;
  logger: FastifyBaseLogger;
}): Services {
  const { config, storage, logger } = deps;
  const accounts = createAccountsService({ db: storage.db });
  const partner = createPartnerService({
    config,
    db: storage.db,
    keyring: loadKeyring(config),
    logger,
  });
  const sessions = createSessionStore({ db: storage.db, ttlSeconds: config.SESSION_TTL_SECONDS });
  return { config, storage, accounts, partner, sessions };
}
