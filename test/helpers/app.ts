/**
 * `buildTestApp(t, backend)`: the real app over real, isolated storage, closed in `t.after`.
 * Log lines are captured in `logs` (raw JSON strings) so tests can assert what never appears.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildAppOptions } from '../../src/app.ts';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { parseConfig, type Config } from '../../src/config.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createServices, type ServiceOverrides, type Services } from '../../src/services.ts';
import type { Backend } from './storage.ts';

export interface TestApp {
  app: FastifyInstance;
  services: Services;
  config: Config;
  /** Every log line written so far. */
  logs: string[];
}

type Hookable = Pick<TestContext, 'after'>;

/** A Config for tests: NODE_ENV=test, a temporary DATA_DIR, plus `env`. */
export function testConfig(env: Record<string, string> = {}): Config {
  return parseConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'portico-test-')),
    ...env,
  });
}

/** A stream for a logger that keeps every line written to it in `logs` (raw JSON strings). */
export function captureLogs(): { logs: string[]; stream: Writable } {
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { logs, stream };
}

export async function buildTestApp(
  t: Hookable,
  backend: Backend,
  env: Record<string, string> = {},
  options: Pick<BuildAppOptions, 'providerWebhookSink'> = {},
  overrides: ServiceOverrides = {},
): Promise<TestApp> {
  const config = testConfig(env);
  const storage = await backend.open();
  const { logs, stream } = captureLogs();
  const logger = createLogger(config.LOG_LEVEL, stream);
  const services = createServices({ config, storage, logger, overrides });
  const app = await buildApp({ services, logger, ...options });
  t.after(async () => {
    await app.close();
    // As main.ts closes: whatever the test started (background provider work such as grant
    // revocation retries, which would keep this process alive for up to 36 s; the workers; the
    // job queue) stops before its storage closes.
    await services.stop();
    await storage.close();
  });
  return { app, services, config, logs };
}

/** Create a portal through the service; returns its code and the token in clear. */
export async function createPortal(
  services: Services,
  input: { code?: string; scopes?: string[]; email?: string } = {},
) {
  return services.accounts.createPortal({
    name: 'Test portal',
    adminEmail: input.email ?? `admin-${Math.random().toString(36).slice(2)}@example.test`,
    code: input.code,
    scopes: input.scopes,
    actor: CLI_ACTOR,
  });
}
