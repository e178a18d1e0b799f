/**
 * The server of `npm run bench:messaging`, forked by bench/messaging.ts: Portico as `npm start`
 * serves it on PostgreSQL (`services.start()`: the delivery workers on, the access log written),
 * with the sandbox provider either
 *
 * - `BENCH_SANDBOX=inside`: started in this process, as `npm start` does in development;
 * - `BENCH_SANDBOX=outside`: in the parent's process, as the real provider is remote; the
 *   parent gives PROVIDER_* and an authorization code of its sandbox in the environment.
 *
 * `BENCH_WORKERS=0` leaves the delivery workers off (the API alone). It creates a portal,
 * connects it through the sandbox, gives it credit, listens, and sends
 * `{type: 'ready', port, token, from}` over IPC. `{type: 'cpu'}` answers the CPU time used so
 * far; `{type: 'profile-start'}` and
 * `{type: 'profile-stop', path}` record a V8 CPU profile of the main thread between the two;
 * `{type: 'stop'}` closes everything and exits.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { CLI_ACTOR } from '../src/audit/audit-log.ts';
import { parseConfig } from '../src/config.ts';
import { openStorage, storageTargetFor } from '../src/db/client.ts';
import type { ValidatedAuthorizationCode } from '../src/partner/oauth/authorization-response.ts';
import { asyncStdout, createLogger } from '../src/platform/logger.ts';
import { retainTickObjectShape } from '../src/platform/tick-shape.ts';
import {
  startSandboxProvider,
  type SandboxProvider,
} from '../src/sandbox-provider/sandbox-provider.tsx';
import { createServices } from '../src/services.ts';

export type ToMessagingServer =
  | { type: 'cpu' }
  | { type: 'profile-start' }
  | { type: 'profile-stop'; path: string }
  | { type: 'stop' };

export type FromMessagingServer =
  | { type: 'ready'; port: number; token: string; from: string; portalId: number }
  | { type: 'profiled'; path: string | null }
  /** CPU time (user + system) this process used so far, in microseconds. */
  | { type: 'cpu'; micros: number }
  | { type: 'error'; message: string };

const REDIRECT_URI = 'http://localhost:3000/api/auth/partner/callback';
const VERIFY_TOKEN = 'bench-verify-token-0001';

const send = (message: FromMessagingServer) => process.send?.(message);

/** The sandbox in this process and the provider settings pointing at it. */
async function insideSandbox(): Promise<{ sandbox: SandboxProvider; code: string }> {
  const appId = '424242424';
  const appSecret = randomBytes(24).toString('hex');
  const sandbox = await startSandboxProvider({
    port: 0,
    apps: [{ appId, appSecret, redirectUris: [REDIRECT_URI] }],
  });
  Object.assign(process.env, {
    PROVIDER_AUTHORIZATION_BASE_URL: sandbox.url,
    PROVIDER_GRAPH_BASE_URL: sandbox.url,
    PROVIDER_APP_ID: appId,
    PROVIDER_APP_SECRET: appSecret,
    PROVIDER_REDIRECT_URI: REDIRECT_URI,
    PROVIDER_WEBHOOK_VERIFY_TOKEN: VERIFY_TOKEN,
  });
  return { sandbox, code: sandbox.authorize({ appId, redirectUri: REDIRECT_URI }) };
}

async function main(): Promise<void> {
  retainTickObjectShape();
  const inside = process.env.BENCH_SANDBOX === 'inside' ? await insideSandbox() : undefined;
  const code = inside?.code ?? process.env.BENCH_AUTHORIZATION_CODE;
  if (!code) throw new Error('BENCH_AUTHORIZATION_CODE is needed with the sandbox outside');
  const config = parseConfig({
    ...process.env,
    DATA_DIR: mkdtempSync(join(tmpdir(), 'portico-bench-msg-')),
  });
  const logger = createLogger(config.LOG_LEVEL, asyncStdout());
  const storage = await openStorage(storageTargetFor(config));
  await storage.migrate();
  const services = createServices({ config, storage, logger });
  if (process.env.BENCH_WORKERS === '0') await services.messaging.start();
  else await services.start();
  const app = await buildApp({ services, logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  inside?.sandbox.configureApp(config.PROVIDER_APP_ID!, {
    webhookUrl: `http://127.0.0.1:${port}/api/provider/webhooks`,
    webhookVerifyToken: VERIFY_TOKEN,
  });

  const portal = await services.accounts.createPortal({
    name: 'Bench',
    adminEmail: `bench-${process.pid}@messaging.test`,
    actor: CLI_ACTOR,
  });
  const portalId = await services.accounts.portalIdFor(portal.portalCode);
  await services.partner.completeAuthorization({
    portalId,
    userId: portal.userId,
    // A code of the sandbox's, as the callback's validation hands it on.
    authorizationCode: code as ValidatedAuthorizationCode,
  });
  await services.messaging.addCredit({ portalId, amount: 1e12, note: 'bench', actor: CLI_ACTOR });
  const [from] = await services.messagingProvider.numbers(portalId);
  send({ type: 'ready', port, token: portal.token, from: from!.id, portalId });

  const close = async () => {
    await app.close();
    await services.stop();
    await storage.close();
    await inside?.sandbox.close();
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
  };
  const profiler = new Session();
  profiler.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      profiler.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
    );
  process.on('message', (message: ToMessagingServer) => {
    if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      send({ type: 'cpu', micros: user + system });
    } else if (message.type === 'profile-start') {
      void post('Profiler.enable')
        .then(() => post('Profiler.start'))
        .then(() => send({ type: 'profiled', path: null }));
    } else if (message.type === 'profile-stop') {
      void post('Profiler.stop').then((result) => {
        mkdirSync(dirname(message.path), { recursive: true });
        writeFileSync(message.path, JSON.stringify((result as { profile: unknown }).profile));
        send({ type: 'profiled', path: message.path });
      });
    } else {
      void close().finally(() => process.exit(0));
    }
  });
  process.on('disconnect', () => void close().finally(() => process.exit(0)));
}

main().catch((err: unknown) => {
  send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  process.exit(1);
});
