/**
 * The services of every feature, built once over one storage. Shared by the HTTP app, the
 * admin socket and the CLI, so that all three apply the same rules. Only the composition roots
 * (`main.ts`, `app.ts`, `cli.ts`) and `admin/` import this file; a feature's route plugin gets
 * the few services it uses.
 */
import { createAccountsService, type AccountsService } from './accounts/accounts-service.ts';
import { createTokenVerification, type TokenVerification } from './accounts/token-verification.ts';
import { createSessionStore, type SessionStore } from './browser/session-store.ts';
import type { Config } from './config.ts';
import { createContactsService, type ContactsService } from './contacts/contacts-service.ts';
import type { Storage } from './db/client.ts';
import { createDraftsService, type DraftsService } from './messaging/drafts-service.ts';
import { createNumbersService, type NumbersService } from './messaging/numbers-service.ts';
import { createTemplatesService, type TemplatesService } from './messaging/templates-service.ts';
import { createPartnerService, type PartnerService } from './partner/partner-service.ts';
import { loadKeyring } from './platform/keyring.ts';
import type { Logger } from './platform/logger.ts';
import { createTicketsService, type TicketsService } from './tickets/tickets-service.ts';

export interface Services {
  config: Config;
  storage: Storage;
  accounts: AccountsService;
  tickets: TicketsService;
  contacts: ContactsService;
  /**
   * API token verification (hash → cache → lookup), distrusted, i.e. read-through, until its
   * listener is started (`buildApp` does).
   */
  tokenVerification: TokenVerification;
  partner: PartnerService;
  /** The sender numbers of the connected WhatsApp Business account. */
  numbers: NumbersService;
  /** The provider's message templates of the connected account. */
  templates: TemplatesService;
  /** Portico-side message drafts and sending them. */
  drafts: DraftsService;
  /** Browser sessions of the web pages. */
  sessions: SessionStore;
}

export function createServices(deps: {
  config: Config;
  storage: Storage;
  logger: Logger;
}): Services {
  const { config, storage, logger } = deps;
  const tokenVerification = createTokenVerification({ storage, settings: config, logger });
  const partner = createPartnerService({
    config,
    db: storage.db,
    keyring: loadKeyring(config),
    logger,
  });
  return {
    config,
    storage,
    tokenVerification,
    accounts: createAccountsService({
      db: storage.db,
      // This instance drops its own entry before the changing call returns: the old token fails
      // here on the very next request, without waiting for the notification.
      onTokenChange: (portalId) => tokenVerification.dropPortal(portalId),
    }),
    tickets: createTicketsService({
      db: storage.db,
      providerAppSecret: config.PROVIDER_APP_SECRET,
      logger,
    }),
    contacts: createContactsService({ db: storage.db, logger }),
    partner,
    numbers: createNumbersService({ partner }),
    templates: createTemplatesService({ partner }),
    drafts: createDraftsService({
      db: storage.db,
      // The messaging send service (POST /messaging/messages) is wired here once it exists;
      // until then sending a draft answers 503.
      send: undefined,
      isConnected: async (portalId) => (await partner.wabaIdsOf(portalId)).length > 0,
    }),
    sessions: createSessionStore({ db: storage.db, ttlSeconds: config.SESSION_TTL_SECONDS }),
  };
}
