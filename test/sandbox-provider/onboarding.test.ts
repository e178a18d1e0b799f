/**
 * The sandbox's onboarding after Embedded Signup, as Meta's pages describe it: a number sends
 * nothing until it is registered (133010), a WABA's webhooks reach no app that is not subscribed
 * to it, `subscribed_apps` lists and removes, and registration is limited to 10 requests per
 * number in 72 hours (133016) with the PIN of the first registration kept (133005).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { recordAppWebhooks, startTestProvider } from '../helpers/provider.ts';
import { call, granted, onboard } from './sandbox-cloud.ts';

const PERSON = '16505551234';
const HELLO = { name: 'hello_world', language: { code: 'en_US' } };
const send = (to: string) => ({
  messaging_product: 'whatsapp',
  to,
  type: 'template',
  template: HELLO,
});
const pin = (value: string) => ({ messaging_product: 'whatsapp', pin: value });

describe('sandbox onboarding', () => {
  test('an unregistered number cannot send; registered, it can', async (t) => {
    const p = await startTestProvider(t);
    const { token, wabaId, numbers } = await granted(p, '7101', { onboard: false });
    const refused = await call(p, 'POST', `/v21.0/${numbers[0]}/messages`, {
      token,
      body: send(PERSON),
    });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 133010);
    assert.equal(refused.body.error.error_data.messaging_product, 'whatsapp');
    assert.equal(p.sandbox.cloud.messages.length, 0);

    await onboard(p, token, wabaId, [numbers[0]]);
    const sent = await call(p, 'POST', `/v21.0/${numbers[0]}/messages`, {
      token,
      body: send(PERSON),
    });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    assert.match(sent.body.messages[0].id, /^wamid\./);
    // The other number of the WABA is still unregistered.
    const other = await call(p, 'POST', `/v21.0/${numbers[1]}/messages`, {
      token,
      body: send(PERSON),
    });
    assert.equal(other.body.error.code, 133010);
  });

  test('no webhook reaches an app not subscribed to the WABA; subscribed, it does', async (t) => {
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { token, wabaId, numbers } = await granted(p, '7102', { onboard: false });
    const before = await call(p, 'POST', '/sandbox/inbound', {
      body: { phoneNumberId: numbers[0], from: PERSON, text: 'hello' },
    });
    assert.equal(before.status, 502, JSON.stringify(before.body));
    assert.deepEqual(
      before.body.deliveries.map((d: { status: unknown }) => d.status),
      ['unsubscribed'],
    );
    assert.equal(hooks.bodies.length, 0);

    const listed = await call(p, 'GET', `/v21.0/${wabaId}/subscribed_apps`, { token });
    assert.deepEqual(listed.body, { data: [] });
    const subscribed = await call(p, 'POST', `/v21.0/${wabaId}/subscribed_apps`, { token });
    assert.deepEqual(subscribed.body, { success: true });
    const after = await call(p, 'GET', `/v21.0/${wabaId}/subscribed_apps`, { token });
    assert.equal(after.body.data.length, 1);
    assert.equal(after.body.data[0].whatsapp_business_api_data.id, p.appId);

    const delivered = await call(p, 'POST', '/sandbox/inbound', {
      body: { phoneNumberId: numbers[0], from: PERSON, text: 'hello again' },
    });
    assert.equal(delivered.status, 200, JSON.stringify(delivered.body));
    assert.equal(hooks.bodies.length, 1);

    const removed = await call(p, 'DELETE', `/v21.0/${wabaId}/subscribed_apps`, { token });
    assert.deepEqual(removed.body, { success: true });
    assert.deepEqual(p.sandbox.cloud.subscribedApps(wabaId), []);
  });

  test('10 registration requests per number in 72 hours, then 133016; the PIN is kept', async (t) => {
    const p = await startTestProvider(t);
    const { token, numbers } = await granted(p, '7103', { onboard: false });
    const register = (value: string) =>
      call(p, 'POST', `/v21.0/${numbers[0]}/register`, { token, body: pin(value) });
    const malformed = await call(p, 'POST', `/v21.0/${numbers[0]}/register`, {
      token,
      body: pin('12345'),
    });
    assert.equal(malformed.body.error.code, 100);
    assert.deepEqual((await register('111111')).body, { success: true });
    assert.equal(p.sandbox.cloud.isRegistered(numbers[0]), true);
    const mismatch = await register('222222');
    assert.equal(mismatch.body.error.code, 133005);
    for (let i = 3; i <= 10; i++) assert.equal((await register('111111')).status, 200, `#${i}`);
    const limited = await register('111111');
    assert.equal(limited.status, 400);
    assert.equal(limited.body.error.code, 133016);
    // Still blocked just before the 72 hours are over, allowed after.
    p.sandbox.advanceTime(72 * 3600 * 1000 - 60_000);
    assert.equal((await register('111111')).body.error.code, 133016);
    p.sandbox.advanceTime(120_000);
    assert.deepEqual((await register('111111')).body, { success: true });

    const deregistered = await call(p, 'POST', `/v21.0/${numbers[0]}/deregister`, { token });
    assert.deepEqual(deregistered.body, { success: true });
    assert.equal(p.sandbox.cloud.isRegistered(numbers[0]), false);
  });

  test("another person's WABA or number is refused (200)", async (t) => {
    const p = await startTestProvider(t);
    const { token } = await granted(p, '7104', { onboard: false });
    const other = await granted(p, '7105', { onboard: false });
    const subscribe = await call(p, 'POST', `/v21.0/${other.wabaId}/subscribed_apps`, { token });
    assert.equal(subscribe.body.error.code, 200);
    const register = await call(p, 'POST', `/v21.0/${other.numbers[0]}/register`, {
      token,
      body: pin('123456'),
    });
    assert.equal(register.body.error.code, 200);
  });
});
