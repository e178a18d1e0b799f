/**
 * Webhooks the sandbox sends to an app, as the provider does for a WhatsApp Business Account:
 * a JSON POST to the app's webhook URL signed `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app
 * secret, raw body)>`, body `{"object":"whatsapp_business_account","entry":[{"id":<WABA id>,
 * "time","changes":[{"field","value"}]}]}`. Before the first delivery to an app, the sandbox
 * verifies the subscription as the provider does when one is configured: `GET {url}?hub.mode=
 * subscribe&hub.verify_token=…&hub.challenge=…` must echo the challenge.
 *
 * A WABA's notifications go only to the apps subscribed to that WABA (`POST
 * /{waba-id}/subscribed_apps`, cloud-onboarding.ts): the provider sends an unsubscribed app
 * nothing, and the attempt is recorded as `unsubscribed`. `account_update` is the exception: it
 * is an app-level field (it announces `PARTNER_ADDED` before any subscription exists).
 *
 * Background deliveries (statuses, template reviews) are retried like the provider does, with
 * decreasing frequency (here six more times over about two minutes: an app instance restarting
 * or a slow answer under load loses nothing); an awaited one (`/sandbox/inbound`) is tried once.
 *
 * @see https://developers.facebook.com/docs/graph-api/webhooks/getting-started
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/components
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/solution-providers/manage-webhooks
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/embedded-signup/hosted-es
 */
import { createHmac, randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { isSubscribed, type DeliveryStatus } from './cloud-state.ts';
import type { SandboxAppConfig, SandboxState } from './sandbox-state.ts';

/** How long the sandbox waits for an app's webhook answer, in milliseconds. */
const WEBHOOK_TIMEOUT_MS = 10_000;
/** Waits before each retry of a background delivery, in milliseconds. */
const RETRY_DELAYS_MS = [500, 2_000, 5_000, 15_000, 30_000, 60_000];

/** The provider's signature header value for `body` under the app secret. */
export function hubSignature(appSecret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`;
}

/** A WABA notification body with one change. */
export function wabaNotification(wabaId: string, field: string, value: unknown, nowMs: number) {
  return {
    object: 'whatsapp_business_account',
    entry: [{ id: wabaId, time: Math.floor(nowMs / 1000), changes: [{ field, value }] }],
  };
}

/**
 * Verify the app's subscription once (when it has a verify token configured).
 *
 * @returns whether the app may be sent notifications.
 */
async function verifiedSubscription(state: SandboxState, app: SandboxAppConfig): Promise<boolean> {
  if (!app.webhookVerifyToken || state.cloud.verifiedApps.has(app.appId)) return true;
  const challenge = randomBytes(8).readUInt32BE(0).toString();
  const url = new URL(app.webhookUrl!);
  url.searchParams.set('hub.mode', 'subscribe');
  url.searchParams.set('hub.verify_token', app.webhookVerifyToken);
  url.searchParams.set('hub.challenge', challenge);
  try {
    const res = await fetch(url, {
      signal: AbortSignal.any([AbortSignal.timeout(WEBHOOK_TIMEOUT_MS), state.cloud.signal]),
    });
    if (res.status === 200 && (await res.text()) === challenge) {
      state.cloud.verifiedApps.add(app.appId);
      return true;
    }
  } catch {
    /* unreachable: not verified */
  }
  state.cloud.deliveries.push({ appId: app.appId, field: 'subscription', status: 'error' });
  return false;
}

/** Fields the provider sends an app whatever its WABA subscriptions (app-level fields). */
const APP_LEVEL_FIELDS = new Set(['account_update']);

/** Whether the app is subscribed to every WABA the notification's entries name. */
function subscribedToAll(state: SandboxState, appId: string, notification: unknown): boolean {
  const entries = (notification as { entry?: { id?: unknown }[] }).entry ?? [];
  return entries.every((e) => typeof e.id === 'string' && isSubscribed(state.cloud, e.id, appId));
}

/**
 * POST one signed notification to the app, once.
 *
 * @returns the app's HTTP status, `error` (no webhook URL, unverified, unreachable), or
 *   `unsubscribed` (nothing sent: the app is not subscribed to the WABA).
 */
export async function deliverOnce(
  state: SandboxState,
  appId: string,
  field: string,
  notification: unknown,
): Promise<DeliveryStatus> {
  if (!APP_LEVEL_FIELDS.has(field) && !subscribedToAll(state, appId, notification)) {
    state.cloud.deliveries.push({ appId, field, status: 'unsubscribed' });
    return 'unsubscribed';
  }
  const app = state.apps.get(appId);
  if (!app?.webhookUrl) return 'error';
  let status: DeliveryStatus = 'error';
  if (await verifiedSubscription(state, app)) {
    const body = JSON.stringify(notification);
    try {
      const res = await fetch(app.webhookUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': hubSignature(app.appSecret, body),
        },
        body,
        signal: AbortSignal.any([AbortSignal.timeout(WEBHOOK_TIMEOUT_MS), state.cloud.signal]),
      });
      await res.arrayBuffer();
      status = res.status;
    } catch {
      status = 'error';
    }
  }
  state.cloud.deliveries.push({ appId, field, status });
  return status;
}

/** `deliverOnce`, retried after `RETRY_DELAYS_MS` until the app answers 200 (background). */
export async function deliverWithRetries(
  state: SandboxState,
  appId: string,
  field: string,
  notification: unknown,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const status = await deliverOnce(state, appId, field, notification);
    if (status === 200 || status === 'unsubscribed') return;
    const wait = RETRY_DELAYS_MS[attempt];
    if (wait === undefined || state.cloud.signal.aborted) return;
    try {
      await delay(wait, undefined, { signal: state.cloud.signal });
    } catch {
      return; // closing
    }
  }
}

/** The apps holding a WhatsApp grant that covers `wabaId` (who hears of its inbound messages). */
export function appsOfWaba(state: SandboxState, wabaId: string): string[] {
  const apps = new Set<string>();
  for (const g of state.grants.values())
    if (g.assetIds.includes(wabaId) && g.permissions.some((p) => p.startsWith('whatsapp_')))
      apps.add(g.appId);
  return [...apps];
}
