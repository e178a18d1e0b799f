/**
 * The app wired to a real sandbox provider over HTTP, and the steps of the browser side of the
 * authorization flow (consent → start → callback) driven through `app.inject`.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import {
  startSandboxProvider,
  type SandboxProvider,
} from '../../src/sandbox-provider/sandbox-provider.tsx';
import { buildTestApp, type TestApp } from './app.ts';
import type { Backend } from './storage.ts';
import { sandboxProviderEnv } from './spawn.ts';
import { Browser, csrfOf, portalWithPassword, setCookies } from './web.ts';

export const APP_ORIGIN = 'http://localhost:3999';
export const REDIRECT_URI = `${APP_ORIGIN}/api/auth/partner/callback`;

export interface FlowApp extends TestApp {
  sandbox: SandboxProvider;
  appId: string;
  appSecret: string;
  /** The key material in TOKEN_ENCRYPTION_KEYS. */
  encryptionKeys: string;
}

/**
 * A sandbox provider with one app registered for REDIRECT_URI (closed in `t.after`), and the
 * environment that configures Portico for it (one fresh encryption key).
 */
export async function startFlowSandbox(t: Pick<TestContext, 'after'>) {
  const appId = `1${randomBytes(6).readUIntBE(0, 6)}`;
  const appSecret = randomBytes(24).toString('hex');
  const sandbox = await startSandboxProvider({
    host: '127.0.0.1',
    port: 0,
    apps: [{ appId, appSecret, redirectUris: [REDIRECT_URI] }],
  });
  t.after(() => sandbox.close());
  const env = {
    APP_BASE_URL: APP_ORIGIN,
    ...sandboxProviderEnv({ url: sandbox.url, appId, appSecret, redirectUri: REDIRECT_URI }),
  };
  return { sandbox, appId, appSecret, encryptionKeys: env.TOKEN_ENCRYPTION_KEYS, env };
}

/**
 * A sandbox provider with one app registered for REDIRECT_URI, and the app configured for it.
 *
 * @param options.redirectUri what the app is configured with (default: the registered one).
 */
export async function buildFlowApp(
  t: Pick<TestContext, 'after'>,
  backend: Backend,
  options: { redirectUri?: string; env?: Record<string, string> } = {},
): Promise<FlowApp> {
  const { sandbox, appId, appSecret, encryptionKeys, env } = await startFlowSandbox(t);
  const testApp = await buildTestApp(t, backend, {
    ...env,
    PROVIDER_REDIRECT_URI: options.redirectUri ?? REDIRECT_URI,
    ...options.env,
  });
  return { ...testApp, sandbox, appId, appSecret, encryptionKeys };
}

/** A signed-in browser of a fresh portal's main administrator. */
export async function signedInBrowser(flow: FlowApp, input: { code?: string } = {}) {
  const portal = await portalWithPassword(flow.services, input);
  const browser = new Browser(flow.app);
  await browser.signIn(portal.email);
  return { browser, portal };
}

/** The PKCE challenge of each app's latest authorization request (what its dialog would bind). */
const lastChallenge = new WeakMap<object, string | undefined>();

/**
 * /connect → consent → start. Returns the state (from the parsed state cookie) and the
 * provider redirect. The redirect's PKCE challenge is what {@link allow} binds its code to.
 */
export async function startAuthorization(browser: Browser) {
  const connect = await browser.get('/connect');
  assert.equal(connect.statusCode, 200);
  const consent = await browser.post('/api/auth/partner/consent', { csrf: csrfOf(connect.body) });
  assert.equal(consent.statusCode, 303);
  assert.equal(consent.headers.location, '/api/auth/partner/start');
  const start = await browser.get('/api/auth/partner/start');
  assert.equal(start.statusCode, 302, start.body);
  const cookie = setCookies(start).find((c) => c.name === 'portico_oauth_state');
  assert.ok(cookie, 'state cookie set');
  const dialog = new URL(String(start.headers.location));
  lastChallenge.set(browser.app, dialog.searchParams.get('code_challenge') ?? undefined);
  return { state: cookie.value, location: new URL(String(start.headers.location)), start, cookie };
}

/** The callback with these query parameters (undefined ones left out). */
export function callbackUrl(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams(
    Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined),
  );
  return `/api/auth/partner/callback?${q.toString()}`;
}

/**
 * A single-use code from the sandbox, as if the person clicked Allow in the dialog of the app's
 * latest {@link startAuthorization} (bound to its PKCE challenge, as the dialog binds it).
 */
export function allow(flow: FlowApp, input: { permissions?: string[]; userId?: string } = {}) {
  return flow.sandbox.authorize({
    appId: flow.appId,
    redirectUri: REDIRECT_URI,
    codeChallenge: lastChallenge.get(flow.app),
    ...input,
  });
}

/** Calls the sandbox saw to the token endpoint (code exchanges and long-lived exchanges). */
export function exchangeCalls(flow: FlowApp) {
  return flow.sandbox.calls.filter((c) => c.url.includes('/oauth/access_token'));
}
