/**
 * Several app instances over ONE database, as behind a load balancer: each has its own pool (or,
 * on PGlite, shares the one embedded database the way a single process would), its own
 * verification cache and its own token change listener. Closed in `t.after`.
 */
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { openStorage, type Storage } from '../../src/db/client.ts';
import type { ListenerTiming } from '../../src/accounts/token-change-listener.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createServices, type Services } from '../../src/services.ts';
import { captureLogs, testConfig } from './app.ts';
import { createPostgresDatabase, type Backend } from './storage.ts';
import { deadline } from './deadlines.ts';

export interface Instance {
  app: FastifyInstance;
  services: Services;
  /** Every log line this instance wrote. */
  logs: string[];
}

/** Fast reconnects, so tests that kill the listener do not wait seconds. */
export const FAST_LISTENER: Partial<ListenerTiming> = {
  backoffMinMs: 20,
  backoffMaxMs: 200,
  heartbeatMs: 1_000,
  heartbeatTimeoutMs: 1_000,
};

export async function openInstances(
  t: Pick<TestContext, 'after'>,
  backend: Backend,
  count: number,
  env: Record<string, string> = {},
): Promise<Instance[]> {
  const storages: Storage[] = [];
  let drop = async (): Promise<void> => {};
  if (backend.name === 'pglite') {
    const shared = await backend.open();
    storages.push(...Array.from({ length: count }, () => shared));
    drop = () => shared.close();
  } else {
    const database = await createPostgresDatabase();
    drop = database.drop;
    for (let i = 0; i < count; i++) {
      const storage = await openStorage({ kind: 'postgres', url: database.url, poolSize: 4 });
      if (i === 0) await storage.migrate();
      storages.push(storage);
    }
  }
  const instances: Instance[] = [];
  t.after(async () => {
    // As main.ts stops: the app, then what the test started on the services (workers, the job
    // queue; idempotent), then storage.
    for (const { app } of instances) await app.close();
    for (const { services } of instances) await services.stop();
    if (backend.name === 'postgres') for (const s of storages) await s.close();
    await drop();
  });
  for (const storage of storages) {
    const config = testConfig(env);
    const { logs, stream } = captureLogs();
    const logger = createLogger(config.LOG_LEVEL, stream);
    const services = createServices({ config, storage, logger });
    const app = await buildApp({ services, logger, listenerTiming: FAST_LISTENER });
    instances.push({ app, services, logs });
    // A first attempt that failed (a slow database) is retried: wait for it, so that tests
    // start from the normal state, a trusted cache.
    if (services.tokenVerification.cache.stats().enabled) {
      await eventually(() => app.tokenChangeListener.listening, 'the instance listens');
    }
  }
  return instances;
}

/**
 * Wait until `condition` holds, checking every few milliseconds. The timeout is a safety net
 * against a hung test, not an assertion about speed.
 */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  what: string,
  safetyNetMs = 15_000,
): Promise<void> {
  const giveUp = Date.now() + deadline(safetyNetMs);
  while (!(await condition())) {
    if (Date.now() > giveUp) throw new Error(`Never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
