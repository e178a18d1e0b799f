/**
 * A sandbox provider for tests, on a free port, closed in `t.after`, plus the environment that
 * points Portico at it. Outbound provider calls in tests go over real HTTP to it.
 */
import { randomBytes, randomInt } from 'node:crypto';
import type { TestContext } from 'node:test';
import {
  type CloudOptions,
  startSandboxProvider,
  type SandboxProvider,
} from '../../src/sandbox-provider/sandbox-provider.tsx';
import type { ValidatedAuthorizationCode } from '../../src/partner/oauth/authorization-response.ts';
import type { Services } from '../../src/services.ts';

export interface TestProvider {
  sandbox: SandboxProvider;
  appId: string;
  appSecret: string;
  redirectUri: string;
  appBaseUrl: string;
  /** The verify token of the app's webhook subscription (also in `env`). */
  webhookVerifyToken: string;
  /** Environment for `buildTestApp(t, backend, env)`. */
  env: Record<string, string>;
}

export async function startTestProvider(
  t: Pick<TestContext, 'after'>,
  options: { appBaseUrl?: string; permissions?: string[]; cloud?: Partial<CloudOptions> } = {},
): Promise<TestProvider> {
  const appBaseUrl = options.appBaseUrl ?? 'http://localhost:3000';
  const appId = String(randomInt(100_000_000, 999_999_999));
  const appSecret = randomBytes(24).toString('hex');
  const redirectUri = `${appBaseUrl}/api/auth/partner/callback`;
  const webhookVerifyToken = randomBytes(16).toString('hex');
  const sandbox = await startSandboxProvider({
    port: 0,
    // Short delays: a template is reviewed and a message read within a second.
    cloud: { templateReviewMs: 100, statusDelaysMs: [30, 60, 90], ...options.cloud },
    apps: [
      {
        appId,
        appSecret,
        redirectUris: [redirectUri],
        ...(options.permissions && { permissions: options.permissions }),
        deauthorizeCallbackUrl: `${appBaseUrl}/api/auth/partner/deauthorize`,
        dataDeletionCallbackUrl: `${appBaseUrl}/api/auth/partner/data-deletion`,
        webhookUrl: `${appBaseUrl}/api/provider/webhooks`,
        webhookVerifyToken,
      },
    ],
  });
  t.after(() => sandbox.close());
  return {
    sandbox,
    appId,
    appSecret,
    redirectUri,
    appBaseUrl,
    webhookVerifyToken,
    env: {
      PROVIDER_WEBHOOK_VERIFY_TOKEN: webhookVerifyToken,
      APP_BASE_URL: appBaseUrl,
      PROVIDER_AUTHORIZATION_BASE_URL: sandbox.url,
      PROVIDER_GRAPH_BASE_URL: sandbox.url,
      PROVIDER_APP_ID: appId,
      PROVIDER_APP_SECRET: appSecret,
      PROVIDER_REDIRECT_URI: redirectUri,
    },
  };
}

/**
 * A code as `validateAuthorizationResponse` hands it on. For tests that drive
 * `completeAuthorization` directly, i.e. after the callback's state check (which the callback
 * route's own tests cover).
 */
export function validated(authorizationCode: string): ValidatedAuthorizationCode {
  return authorizationCode as ValidatedAuthorizationCode;
}

/**
 * Connect a portal through the sandbox as the dialog's Allow would, then complete the
 * authorization through the service.
 */
export async function connectPortal(
  services: Services,
  provider: TestProvider,
  input: { portalId: number; userId: number; providerUserId?: string; permissions?: string[] },
) {
  const authorizationCode = provider.sandbox.authorize({
    appId: provider.appId,
    redirectUri: provider.redirectUri,
    ...(input.providerUserId && { userId: input.providerUserId }),
    ...(input.permissions && { permissions: input.permissions }),
  });
  return services.partner.completeAuthorization({
    portalId: input.portalId,
    userId: input.userId,
    authorizationCode: validated(authorizationCode),
  });
}
