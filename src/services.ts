/**
 * The services of every feature, built once over one storage. Shared by the HTTP app, the
 * admin socket and the CLI, so that all three apply the same rules.
 */
import { createAccountsService, type AccountsService } from './accounts/accounts-service.ts';
import type { Config } from './config.ts';
import type { Storage } from './db/client.ts';
import { createTicketsService, type TicketsService } from './tickets/tickets-service.ts';
import { createPrincipalCache, type PrincipalCache } from './external-api/principal-cache.ts';
import { createPartnerService, type PartnerService } from './partner/partner-service.ts';
import { loadKeyring } from './platform/keyring.ts';
import { createSessionStore, type SessionStore } from './web/session-store.ts';
import type { Logger } from './platform/logger.ts';

export interface Services {
  config: Config;
  storage: Storage;
  accounts: AccountsService;
  tickets: TicketsService;
  /**
   * The API token verification cache (token hash → principal). Distrusted, i.e. read-through,
   * until a token change listener is started on it (`buildApp` does).
   */
  principalCache: PrincipalCache;
  partner: PartnerService;
  /** Browser sessions of the web pages. */
  sessions: SessionStore;
}

export function createServices(deps: {
  config: Config;
  storage: Storage;
  logger: Logger;
}): Services {
  const { config, storage, logger } = deps;
  const principalCache = createPrincipalCache({
    maxEntries: config.TOKEN_CACHE_SIZE,
    ttlMs: config.TOKEN_CACHE_TTL_MS,
    load: (tokenHash) => accounts.principalForTokenHash(tokenHash),
  });
  const accounts = createAccountsService({
    db: storage.db,
    // This instance drops its own entry before the changing call returns: the old token fails
    // here on the very next request, without waiting for the notification.
    onTokenChange: (change) => principalCache.invalidatePortal(change.portalId),
  });
  const tickets = createTicketsService({
    db: storage.db,
    providerAppSecret: config.PROVIDER_APP_SECRET,
    logger,
  });
  const partner = createPartnerService({
    config,
    db: storage.db,
    keyring: loadKeyring(config),
    logger,
  });
  const sessions = createSessionStore({ db: storage.db, ttlSeconds: config.SESSION_TTL_SECONDS });
  return { config, storage, accounts, principalCache, tickets, partner, sessions };
}
