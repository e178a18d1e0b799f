/**
 * What the provider does to an app when a person acts on the apps page: it drops the person's
 * grant, revokes their tokens, and POSTs a `signed_request` (form field, HMAC-SHA256 with the
 * app secret) to the callback URL registered for the action.
 *
 * - "Remove the app" → the deauthorize callback; only its HTTP status matters.
 * - "Delete my data" → the data-deletion callback, which answers
 *   `{"url", "confirmation_code"}` for the person to follow their request.
 *
 * Used both by the apps page and by the `SandboxProvider` test hooks, so the two behave alike.
 *
 * @see https://developers.facebook.com/docs/development/create-an-app/app-dashboard/data-deletion-callback
 * @see https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow (the
 *   deauthorize callback)
 */
import type { SandboxState } from './sandbox-state.ts';

/** How long the sandbox waits for an app's callback, in milliseconds. */
const CALLBACK_TIMEOUT_MS = 10_000;

/**
 * POST a signed request about `userId` to `url`.
 *
 * @returns the HTTP status and the body (parsed JSON, or the text when it is not JSON).
 * @throws Error when the app has no such callback URL configured; the fetch's TypeError when
 *   the app cannot be reached; a `TimeoutError` DOMException after `CALLBACK_TIMEOUT_MS`.
 */
async function postSignedRequest(
  state: SandboxState,
  url: string | undefined,
  appId: string,
  userId: string,
): Promise<{ status: number; body: unknown }> {
  if (!url) throw new Error('The app has no callback URL configured in the sandbox.');
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ signed_request: state.signedRequestFor(appId, userId) }),
    signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, body };
}

/**
 * "Remove the app": drop the grant of `userId` for `appId`, revoke their tokens, then POST a
 * signed deauthorize request to the app. The grant is gone even if the callback fails.
 *
 * @returns the HTTP status the app answered.
 * @throws as `postSignedRequest` (no deauthorize callback URL, app unreachable, timeout).
 */
export async function removeApp(
  state: SandboxState,
  appId: string,
  userId: string,
): Promise<{ status: number }> {
  state.removeGrant(appId, userId);
  const { status } = await postSignedRequest(
    state,
    state.apps.get(appId)?.deauthorizeCallbackUrl,
    appId,
    userId,
  );
  return { status };
}

/**
 * "Delete my data": drop the grant and revoke the tokens as "Remove the app" does, then POST a
 * signed data-deletion request to the app.
 *
 * @returns the HTTP status and the app's answer (JSON `{"url", "confirmation_code"}` when the
 *   app follows the protocol; the raw text otherwise).
 * @throws as `postSignedRequest` (no data-deletion callback URL, app unreachable, timeout).
 */
export async function deleteData(
  state: SandboxState,
  appId: string,
  userId: string,
): Promise<{ status: number; body: unknown }> {
  state.removeGrant(appId, userId);
  return postSignedRequest(state, state.apps.get(appId)?.dataDeletionCallbackUrl, appId, userId);
}
