/**
 * Development convenience: when `npm start` runs in development with no PROVIDER_APP_ID, start
 * the sandbox provider on SANDBOX_PROVIDER_PORT (host 127.0.0.1, a different site from the
 * app's `localhost`) with a generated app id and secret (a configured PROVIDER_APP_SECRET is
 * kept), and fill the provider settings from
 * it, the app's webhook URL (`{APP_BASE_URL}/api/provider/webhooks`) and verify token included.
 * Production and test never do this (main.ts checks NODE_ENV; production config refuses a
 * sandbox provider).
 *
 * Its state lives in `DATA_DIR/sandbox-provider.json` (sandbox-store.ts): a restart keeps the
 * app, the grants and the tokens, so a connected portal stays connected.
 */
import type { FastifyBaseLogger } from 'fastify';
import {
  PARTNER_CALLBACK_PATH,
  PROVIDER_WEBHOOKS_PATH,
  SANDBOX_APP_ID_PREFIX,
  type Config,
} from '../config.ts';
import { join } from 'node:path';
import { randomBase62 } from '../platform/crypto.ts';
import { startSandboxProvider, type SandboxProvider } from './sandbox-provider.tsx';
import { readSnapshot, SANDBOX_STATE_FILE } from './sandbox-store.ts';

/** Whether main.ts should start the sandbox for this configuration. */
export function wantsDevelopmentSandbox(config: Config): boolean {
  return config.NODE_ENV === 'development' && !config.PROVIDER_APP_ID;
}

/**
 * Start the sandbox and return the configuration that points Portico at it.
 *
 * @returns the filled config and the sandbox (close it on shutdown).
 */
export async function startDevelopmentSandbox(
  config: Config,
  logger: FastifyBaseLogger,
): Promise<{ config: Config; sandbox: SandboxProvider }> {
  // The state of the previous run, if any: the same app (id, secret, verify token), so the
  // connections made with it, and their tokens, stay valid across a restart.
  const file = join(config.dataDir, SANDBOX_STATE_FILE);
  const saved = readSnapshot(file);
  const previous = saved?.apps.find((a) => a.appId.startsWith(SANDBOX_APP_ID_PREFIX));
  const appId = previous?.appId ?? `${SANDBOX_APP_ID_PREFIX}${randomBase62(8)}`;
  // A configured app secret is kept (the operator knows it); otherwise the saved or a new one.
  const appSecret = config.PROVIDER_APP_SECRET ?? previous?.appSecret ?? randomBase62(32);
  // The app's webhook and its verify token, as one registers them in the provider's app
  // dashboard; a configured verify token is kept.
  const webhookVerifyToken =
    config.PROVIDER_WEBHOOK_VERIFY_TOKEN ?? previous?.webhookVerifyToken ?? randomBase62(24);
  const redirectUri =
    config.PROVIDER_REDIRECT_URI ?? `${config.APP_BASE_URL}${PARTNER_CALLBACK_PATH}`;
  const sandbox = await startSandboxProvider({
    host: '127.0.0.1',
    port: config.SANDBOX_PROVIDER_PORT,
    persistence: { file, saved },
    logger,
    // Templates with an image or document header, to try rich template sends (README).
    cloud: { sampleTemplates: true },
    apps: [
      {
        appId,
        appSecret,
        name: 'Portico (development)',
        redirectUris: [redirectUri],
        permissions: config.PROVIDER_REQUIRED_PERMISSIONS.split(','),
        deauthorizeCallbackUrl: `${config.APP_BASE_URL}/api/auth/partner/deauthorize`,
        dataDeletionCallbackUrl: `${config.APP_BASE_URL}/api/auth/partner/data-deletion`,
        webhookUrl: `${config.APP_BASE_URL}${PROVIDER_WEBHOOKS_PATH}`,
        webhookVerifyToken,
      },
    ],
  });
  logger.info(
    {
      sandboxUrl: sandbox.url,
      appsPage: `${sandbox.url}/sandbox/apps`,
      phonePage: `${sandbox.url}/sandbox/phone`,
      appId,
      stateFile: file,
      restored: saved !== undefined,
    },
    'no PROVIDER_APP_ID in development: started the sandbox provider and connected Portico to it',
  );
  return {
    sandbox,
    config: {
      ...config,
      PROVIDER_AUTHORIZATION_BASE_URL: sandbox.url,
      PROVIDER_GRAPH_BASE_URL: sandbox.url,
      PROVIDER_APP_ID: appId,
      PROVIDER_APP_SECRET: appSecret,
      PROVIDER_REDIRECT_URI: redirectUri,
      PROVIDER_WEBHOOK_VERIFY_TOKEN: webhookVerifyToken,
      providerIsSandbox: true,
    },
  };
}
