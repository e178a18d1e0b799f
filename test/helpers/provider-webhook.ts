/**
 * A provider webhook as the provider sends it: `body` POSTed to Portico's provider-webhook
 * route with its `X-Hub-Signature-256` (HMAC-SHA256 of the body under the app secret).
 *
 * @see https://developers.facebook.com/docs/graph-api/webhooks/getting-started#event-notifications
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import type { MessagingSetup } from './messaging.ts';

/** POST `body` signed to `/api/provider/webhooks`; asserts the 200 the provider expects. */
export async function replaySigned(s: MessagingSetup, body: string): Promise<void> {
  const res = await s.app.inject({
    method: 'POST',
    url: '/api/provider/webhooks',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', s.provider.appSecret).update(body).digest('hex')}`,
    },
    payload: body,
  });
  assert.equal(res.statusCode, 200, res.body);
}
