/**
 * Listens for token changes (`LISTEN portico_token_change`) and keeps this instance's
 * verification cache honest: each notification drops the portal's entries; while not listening
 * the cache is distrusted (every lookup reads the database). The session, its heartbeat and its
 * reconnects are db/notification-listener.ts's; the cache is trusted again only after `LISTEN`
 * has been acknowledged, so no change committed after that point is missed.
 *
 * @see https://www.postgresql.org/docs/current/sql-listen.html
 * @see ./principal-cache.ts for the invariants this feeds
 */
import {
  startNotificationListener,
  type ListenerTiming,
  type NotificationListener,
} from '../db/notification-listener.ts';
import { parseTokenChangePayload, TOKEN_CHANGE_CHANNEL } from './token-change-channel.ts';
import type { Storage } from '../db/client.ts';
import type { PrincipalCache } from './principal-cache.ts';
import type { Logger } from '../platform/logger.ts';

export { DEFAULT_LISTENER_TIMING, type ListenerTiming } from '../db/notification-listener.ts';

/** `application_name` of the listening session, to find it in `pg_stat_activity`. */
export const LISTENER_APPLICATION_NAME = 'portico-token-listener';

export type TokenChangeListener = NotificationListener;

export interface TokenChangeListenerDeps {
  storage: Storage;
  cache: PrincipalCache;
  logger: Logger;
  /**
   * PostgreSQL URL for the listening session when it must differ from the storage's (the
   * storage goes through a transaction-mode pooler, which cannot hold a LISTEN).
   */
  listenUrl?: string | undefined;
  timing?: Partial<ListenerTiming>;
}

/** Nothing to keep honest: the cache is off, so every lookup reads the database anyway. */
const INERT: TokenChangeListener = {
  ready: Promise.resolve(),
  listening: false,
  backendPid: null,
  close: async () => {},
};

/** Start listening for token changes on `storage`; see the module comment. */
export function startTokenChangeListener(deps: TokenChangeListenerDeps): TokenChangeListener {
  const { cache } = deps;
  if (!cache.stats().enabled) return INERT;
  return startNotificationListener({
    storage: deps.storage,
    logger: deps.logger,
    channel: TOKEN_CHANGE_CHANNEL,
    applicationName: LISTENER_APPLICATION_NAME,
    listenUrl: deps.listenUrl,
    timing: deps.timing,
    onNotify(payload) {
      const portalId = parseTokenChangePayload(payload);
      if (portalId === null) cache.invalidateAll();
      else cache.invalidatePortal(portalId);
    },
    onListening: () => cache.trust(),
    onLost: () => cache.distrust(),
    messages: {
      listening: 'token change listener is listening: verification cache on',
      wasListening:
        'token change listener lost its connection: verifying every token against the database until listening again',
      never:
        'token change listener could not listen: verifying every token against the database until it does',
    },
  });
}
