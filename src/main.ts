/**
 * Start: config → storage (+ migrations) → app → listen; graceful shutdown on SIGTERM/SIGINT.
 *
 * Exit codes: 0 after a clean shutdown; 1 when start-up fails (the reason on one stderr line),
 * shutdown overruns SHUTDOWN_TIMEOUT_MS, or a programming error reaches the process (a
 * dependency fault never ends it: platform/process-faults.ts).
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { startAdminSocket } from './cli/admin-socket.ts';
import { buildApp } from './app.ts';
import { ConfigError, loadDotEnv, parseConfig, type Config } from './config.ts';
import { openStorage, storageTargetFor, type StorageTarget } from './db/client.ts';
import { DataDirLockedError } from './platform/data-dir-lock.ts';
import { KeySpecError } from './platform/keyring.ts';
import { createLogger, serverLogDestination } from './platform/logger.ts';
import { installProcessFaultPolicy } from './platform/process-faults.ts';
import { compilePendingSchemas } from './platform/schema-compilers.ts';
import { retainTickObjectShape } from './platform/tick-shape.ts';
import {
  startDevelopmentSandbox,
  wantsDevelopmentSandbox,
} from './sandbox-provider/development.ts';
import { createServices } from './services.ts';

async function main(): Promise<void> {
  retainTickObjectShape();
  loadDotEnv();
  let config = parseConfig();
  const logger = createLogger(config.LOG_LEVEL, await serverLogDestination(config.isProduction));
  // A dependency fault never ends the process; a programming error does (process-faults.ts).
  installProcessFaultPolicy({
    log: logger,
    exit: (code) => {
      setTimeout(() => process.exit(code), 1_000).unref();
      logger.flush(() => process.exit(code));
    },
  });
  // The development sandbox needs no storage: it starts while the database opens (a failure is
  // handled where it is awaited below).
  const sandboxStarting = wantsDevelopmentSandbox(config)
    ? startDevelopmentSandbox(config, logger)
    : undefined;
  sandboxStarting?.catch(() => undefined);
  const closers: (() => Promise<unknown>)[] = [];
  try {
    const storage = await openStorage(serverStorageTarget(config, logger)).finally(async () => {
      const started = await sandboxStarting?.catch(() => undefined);
      if (started) closers.unshift(() => started.sandbox.close());
    });
    closers.push(() => storage.close());
    await storage.migrate();
    if (sandboxStarting) config = (await sandboxStarting).config;
    const services = createServices({ config, storage, logger });
    // The job queue, the workers and the health checker: stopped after the app, before storage.
    closers.unshift(() => services.stop());
    await services.start();
    const app = await buildApp({ services, logger });
    closers.unshift(() => app.close());
    let admin: FastifyInstance | undefined;
    if (storage.kind === 'pglite') {
      admin = await startAdminSocket(services, logger);
      closers.unshift(() => admin!.close());
    }
    await app.listen({ host: config.HOST, port: config.PORT });
    // The routes' validators and serializers were left to compile at first use (a faster
    // start); the rest compile now, between requests.
    compilePendingSchemas().catch((err: unknown) =>
      logger.error({ err }, 'a route schema does not compile'),
    );
    // The address people open: APP_BASE_URL (the pages redirect other hosts to it in
    // development), not the listening host, which may be 127.0.0.1 or 0.0.0.0.
    logger.info(
      {
        storage: storage.kind,
        dataDir: storage.kind === 'pglite' ? config.dataDir : undefined,
        signIn: `${config.APP_BASE_URL}/login`,
      },
      'Portico is serving',
    );
  } catch (err) {
    await closeAll(closers);
    throw err;
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const timer = setTimeout(() => {
      logger.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS);
    timer.unref();
    void closeAll(closers).then(() => {
      logger.info('stopped');
      // Wait for the asynchronous log destination: the write in flight first, then the rest,
      // in order (a synchronous flush could overtake the write in flight).
      logger.flush(() => process.exit(0));
    });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/**
 * Where the server stores: for the embedded database, it waits (up to CLI_SERVER_WAIT_MS, saying
 * so in its log) for a CLI command that opened the data directory just before it started.
 */
function serverStorageTarget(config: Config, logger: FastifyBaseLogger): StorageTarget {
  const target = storageTargetFor(config);
  if (target.kind !== 'pglite') return target;
  const waitMs = config.CLI_SERVER_WAIT_MS;
  return {
    ...target,
    waitForCli: {
      ms: waitMs,
      onWait: (cliPid) =>
        logger.warn(
          { cliPid, waitMs },
          `a CLI command holds the data directory; waiting up to ${Math.round(waitMs / 1000)} s for it to finish`,
        ),
    },
  };
}

/** Close in order (app first, storage last); one failure does not stop the rest. */
async function closeAll(closers: (() => Promise<unknown>)[]): Promise<void> {
  for (const close of closers) {
    try {
      await close();
    } catch {
      /* keep closing the rest */
    }
  }
}

main().catch((err: unknown) => {
  if (
    err instanceof ConfigError ||
    err instanceof DataDirLockedError ||
    err instanceof KeySpecError
  ) {
    process.stderr.write(`portico: ${err.message}\n`);
  } else {
    process.stderr.write(
      `portico: start-up failed: ${err instanceof Error ? err.stack : String(err)}\n`,
    );
  }
  process.exit(1);
});
