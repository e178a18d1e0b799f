/**
 * A sandbox provider for tests, on a free port, closed in `t.after`, plus the environment that
 * points Portico at it. Outbound provider calls in tests go over real HTTP to it.
 */
import { createHmac, randomBytes, randomInt } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import {
  type CloudOptions,
  startSandboxProvider,
  type SandboxProvider,
} from '../../src/sandbox-provider/sandbox-provider.tsx';
import type { ValidatedAuthorizationCode } from '../../src/partner/oauth/authorization-response.ts';
import type { Services } from '../../src/services.ts';
import { deadline } from './deadlines.ts';

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

/** One `statuses[]` item as the sandbox posts it (the fields tests read). */
export interface StatusItem {
  id: string;
  status: string;
  timestamp: string;
  recipient_id?: string;
  recipient_user_id?: string;
  conversation?: { id: string; expiration_timestamp?: string; origin: { type: string } };
  pricing?: { billable: boolean; pricing_model: string; type?: string; category: string };
  errors?: {
    code: number;
    title: string;
    message: string;
    error_data: { details: string };
    href: string;
  }[];
}

export interface RecordedWebhooks {
  /** Every notification body the app was sent (signature checked), parsed, in arrival order. */
  bodies: unknown[];
  /** The `statuses[]` items of `messages` changes for `wamid`, in arrival order. */
  statusesOf(wamid: string): StatusItem[];
  /** Wait (up to 10 s) until `wamid` has `count` statuses; they, in arrival order. */
  waitForStatuses(wamid: string, count: number): Promise<StatusItem[]>;
}

/**
 * Stand in for the app's webhook receiver: a plain HTTP server that answers the sandbox's
 * subscription check, checks `X-Hub-Signature-256` and records each body. The app's webhook
 * URL is pointed at it; closed in `t.after`.
 */
export async function recordAppWebhooks(
  t: Pick<TestContext, 'after'>,
  provider: TestProvider,
): Promise<RecordedWebhooks> {
  const bodies: unknown[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://receiver');
    if (req.method === 'GET') {
      const ok = url.searchParams.get('hub.verify_token') === provider.webhookVerifyToken;
      res.writeHead(ok ? 200 : 403).end(ok ? url.searchParams.get('hub.challenge') : '');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const expected = `sha256=${createHmac('sha256', provider.appSecret).update(raw).digest('hex')}`;
      if (req.headers['x-hub-signature-256'] !== expected) return void res.writeHead(401).end();
      bodies.push(JSON.parse(raw.toString('utf8')));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  provider.sandbox.configureApp(provider.appId, {
    webhookUrl: `http://127.0.0.1:${port}/api/provider/webhooks`,
  });
  const statusesOf = (wamid: string) =>
    bodies.flatMap((b) =>
      (b as { entry: { changes: { value: { statuses?: StatusItem[] } }[] }[] }).entry.flatMap((e) =>
        e.changes.flatMap((c) => (c.value.statuses ?? []).filter((s) => s.id === wamid)),
      ),
    );
  return {
    bodies,
    statusesOf,
    async waitForStatuses(wamid, count) {
      const giveUp = Date.now() + deadline(10_000);
      while (statusesOf(wamid).length < count) {
        if (Date.now() > giveUp)
          throw new Error(`${wamid}: ${statusesOf(wamid).length} of ${count} statuses in time`);
        await delay(10);
      }
      return statusesOf(wamid);
    },
  };
}
