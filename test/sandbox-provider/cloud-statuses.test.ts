/**
 * The sandbox's sends and status webhooks as the Cloud API has them, over raw HTTP in Graph's
 * wire format (a receiver stands in for the app): free text outside the 24-hour customer
 * service window is accepted and then fails with 131047; statuses carry the per-message
 * `pricing` (PMP: every message billed in its category, inside the window too, except in a
 * free entry point window opened by answering a person who wrote from an ad) and no
 * conversation, and `errors[].error_data` on a failure; `hello_world` has no variables, as
 * the provider's own. Every body the sandbox sends passes Portico's webhook parser whole.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseProviderWebhook } from '../../src/partner/cloud-api/provider-webhook-payload.ts';
import { restoreSnapshot, snapshotOf } from '../../src/sandbox-provider/sandbox-store.ts';
import { SandboxState } from '../../src/sandbox-provider/sandbox-state.ts';
import { granted } from './sandbox-cloud.ts';
import {
  recordAppWebhooks,
  startTestProvider,
  type RecordedWebhooks,
  type TestProvider,
} from '../helpers/provider.ts';

const DAY_MS = 24 * 3600 * 1000;

/** POST `/{phone-number-id}/messages` as the Cloud API takes it; the status and the JSON. */
async function send(p: TestProvider, token: string, from: string, message: object) {
  const res = await fetch(`${p.sandbox.url}/v21.0/${from}/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messaging_product: 'whatsapp', ...message }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The wamid of an accepted send (200 with `messages[0].id`). */
async function accepted(p: TestProvider, token: string, from: string, message: object) {
  const res = await send(p, token, from, message);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const wamid = (res.body.messages as { id: string }[])[0]!.id;
  assert.match(wamid, /^wamid\./);
  return wamid;
}

const text = (to: string, body: string) => ({ to, type: 'text', text: { body } });
const template = (to: string, name: string, parameters: string[] = []) => ({
  to,
  type: 'template',
  template: {
    name,
    language: { code: 'en_US' },
    ...(parameters.length > 0 && {
      components: [
        { type: 'body', parameters: parameters.map((t) => ({ type: 'text', text: t })) },
      ],
    }),
  },
});

/** Every recorded body parses whole with Portico's parser: nothing skipped. */
function assertParsedWhole(hooks: RecordedWebhooks) {
  assert.ok(hooks.bodies.length > 0);
  for (const body of hooks.bodies) {
    const parsed = parseProviderWebhook(body);
    assert.ok(parsed.ok, JSON.stringify(body));
    assert.equal(parsed.skipped, 0, JSON.stringify(body));
  }
}

describe('the sandbox sends and reports as the Cloud API does', () => {
  test('free text outside the window: 200 with a wamid, then one failed status with 131047 and error_data.details', async (t) => {
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { token, numbers } = await granted(p, '5501');
    const [a, b] = numbers;
    const outside = await accepted(p, token, a, text('+1 650 555 1234', 'Where is my parcel?'));
    const [failed, ...more] = await hooks.waitForStatuses(outside, 1);
    assert.deepEqual(more, []);
    assert.equal(failed!.status, 'failed');
    assert.equal(failed!.recipient_id, '16505551234');
    assert.equal(failed!.conversation, undefined, 'a failed message opens no conversation');
    assert.equal(failed!.pricing, undefined);
    assert.equal(failed!.errors?.length, 1);
    const [error] = failed!.errors;
    assert.deepEqual(
      [error!.code, error!.title, error!.message],
      [131047, 'Re-engagement message', 'Re-engagement message'],
    );
    assert.match(error!.error_data.details, /more than 24 hours have passed/);
    assert.match(error!.href, /^https:\/\/developers\.facebook\.com\/.*error-codes/);
    assert.equal(p.sandbox.cloud.messages.find((m) => m.wamid === outside)?.status, 'failed');

    // The window is the person's with one business number: writing to A opens it for A only.
    await p.sandbox.cloud.writeIn({ phoneNumberId: a, from: '16505551234', text: 'hi' });
    const fromB = await accepted(p, token, b, text('16505551234', 'From the other number'));
    const fromA = await accepted(p, token, a, text('16505551234', 'On its way'));
    assert.equal((await hooks.waitForStatuses(fromB, 1))[0]!.errors?.[0]?.code, 131047);
    const inWindow = await hooks.waitForStatuses(fromA, 3);
    assert.deepEqual(
      inWindow.map((s) => [s.status, s.errors]),
      [
        ['sent', undefined],
        ['delivered', undefined],
        ['read', undefined],
      ],
    );
    // 24 hours after the person's message the window is closed again.
    p.sandbox.advanceTime(DAY_MS + 1000);
    const late = await accepted(p, token, a, text('16505551234', 'Anything else?'));
    assert.equal((await hooks.waitForStatuses(late, 1))[0]!.errors?.[0]?.code, 131047);

    assertParsedWhole(hooks);
    const events = hooks.bodies.flatMap((body) => {
      const parsed = parseProviderWebhook(body);
      return parsed.ok
        ? parsed.changes.flatMap((c) => (c.kind === 'statuses' ? c.events : []))
        : [];
    });
    assert.deepEqual(events.find((e) => e.wamid === outside)?.errors, [
      { code: 131047, title: 'Re-engagement message' },
    ]);
  });

  test('statuses carry per-message pricing (PMP): every message billed in its category, inside the customer service window too; no conversation', async (t) => {
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { token, wabaId, numbers } = await granted(p, '5502');
    const [a, b] = numbers;
    p.sandbox.cloud.templatesOf(wabaId).push({
      id: '5502000001',
      name: 'spring_sale',
      language: 'en_US',
      category: 'MARKETING',
      status: 'APPROVED',
      components: [{ type: 'BODY', text: 'Our spring sale starts today.' }],
      appId: undefined,
    });
    const billed = (category: string) => ({
      billable: true,
      pricing_model: 'PMP',
      type: 'regular',
      category,
    });
    const wamids = new Map<string, [string, object]>();
    wamids.set('utility outside the window', [
      await accepted(p, token, a, template('16505551234', 'hello_world')),
      billed('utility'),
    ]);
    await p.sandbox.cloud.writeIn({ phoneNumberId: a, from: '16505551234', text: 'hi' });
    wamids.set('utility inside the window', [
      await accepted(p, token, a, template('16505551234', 'hello_world')),
      billed('utility'),
    ]);
    wamids.set('marketing inside the window', [
      await accepted(p, token, a, template('16505551234', 'spring_sale')),
      billed('marketing'),
    ]);
    wamids.set('service inside the window', [
      await accepted(p, token, a, text('16505551234', 'On its way')),
      billed('service'),
    ]);
    wamids.set('utility from the other number (no window there)', [
      await accepted(p, token, b, template('16505551234', 'hello_world')),
      billed('utility'),
    ]);
    const undeliverable = await accepted(p, token, a, template('16505550000', 'hello_world'));

    for (const [what, [wamid, pricing]] of wamids) {
      const items = await hooks.waitForStatuses(wamid, 3);
      assert.deepEqual(
        items.map((s) => s.status),
        ['sent', 'delivered', 'read'],
        what,
      );
      for (const s of items) {
        assert.deepEqual(s.pricing, pricing, what);
        assert.equal(s.conversation, undefined, what);
        assert.equal(s.errors, undefined, what);
      }
    }

    // After 24 hours the window has closed: the utility template is billed as before.
    p.sandbox.advanceTime(DAY_MS + 1000);
    const next = await hooks.waitForStatuses(
      await accepted(p, token, a, template('16505551234', 'hello_world')),
      3,
    );
    assert.deepEqual(next[0]!.pricing, billed('utility'));

    // An undeliverable message: one failed status with the error's details, no pricing.
    const [failed] = await hooks.waitForStatuses(undeliverable, 1);
    assert.equal(failed!.status, 'failed');
    assert.equal(failed!.pricing, undefined);
    assert.deepEqual(
      failed!.errors?.map((e) => [e.code, e.title, typeof e.error_data.details]),
      [[131026, 'Message undeliverable', 'string']],
    );
    assertParsedWhole(hooks);
  });

  test('a free entry point: answering a person who wrote from an ad within 24 hours opens 72 free hours', async (t) => {
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { token, numbers } = await granted(p, '5503');
    const [a, b] = numbers;
    const pricingOf = async (wamid: string) => (await hooks.waitForStatuses(wamid, 3))[0]!.pricing;
    const entry = (category: string) => ({
      billable: false,
      pricing_model: 'PMP',
      type: 'free_entry_point',
      category,
    });
    const billed = (category: string) => ({
      billable: true,
      pricing_model: 'PMP',
      type: 'regular',
      category,
    });
    // A message without a referral opens no free entry point.
    await p.sandbox.cloud.writeIn({ phoneNumberId: a, from: '16505551236', text: 'hi' });
    assert.deepEqual(
      await pricingOf(await accepted(p, token, a, text('16505551236', 'Hello'))),
      billed('service'),
    );
    // From an ad, answered 25 hours later: too late, billed.
    const fromAd = {
      type: 'text' as const,
      text: { body: 'Is this still on?' },
      referral: {
        source_url: 'https://fb.me/3cr4Wqqkv',
        source_id: '1202',
        source_type: 'ad' as const,
      },
    };
    await p.sandbox.cloud.writeIn({ phoneNumberId: a, from: '16505551237', message: fromAd });
    p.sandbox.advanceTime(DAY_MS + 1000);
    assert.deepEqual(
      await pricingOf(await accepted(p, token, a, template('16505551237', 'hello_world'))),
      billed('utility'),
    );
    // From an ad, answered within 24 hours: the answer and everything for 72 hours are free,
    // on that number only.
    await p.sandbox.cloud.writeIn({ phoneNumberId: a, from: '16505551235', message: fromAd });
    p.sandbox.advanceTime(3600 * 1000);
    assert.deepEqual(
      await pricingOf(await accepted(p, token, a, text('16505551235', 'Yes, it is'))),
      entry('service'),
    );
    assert.deepEqual(
      await pricingOf(await accepted(p, token, b, template('16505551235', 'hello_world'))),
      billed('utility'),
    );
    p.sandbox.advanceTime(2 * DAY_MS);
    assert.deepEqual(
      await pricingOf(await accepted(p, token, a, template('16505551235', 'hello_world'))),
      entry('utility'),
    );
    // 72 hours after the answer the window has closed.
    p.sandbox.advanceTime(DAY_MS);
    assert.deepEqual(
      await pricingOf(await accepted(p, token, a, template('16505551235', 'hello_world'))),
      billed('utility'),
    );
  });

  test('free entry points are kept across a restart of the sandbox (its data file)', () => {
    const before = new SandboxState([]);
    const now = before.now();
    before.cloud.referralAt.set('1:16505551238', now);
    before.cloud.referralAt.set('1:16505551239', now);
    assert.equal(before.cloud.freeEntryPoint('1', '16505551238', now), true, 'opened');
    const after = new SandboxState([]);
    restoreSnapshot(after, JSON.parse(JSON.stringify(snapshotOf(before))));
    assert.equal(after.cloud.freeEntryPoint('1', '16505551238', now + 71 * 3600 * 1000), true);
    assert.equal(after.cloud.freeEntryPoint('1', '16505551238', now + 73 * 3600 * 1000), false);
    assert.equal(after.cloud.freeEntryPoint('1', '16505551239', now + 3600 * 1000), true, 'opens');
  });

  test("hello_world is the provider's own: a header, a body and a footer without variables; a parameter → 132000", async (t) => {
    const p = await startTestProvider(t);
    await recordAppWebhooks(t, p);
    const { token, wabaId, numbers } = await granted(p, '5503');
    const res = await fetch(`${p.sandbox.url}/v21.0/${wabaId}/message_templates`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const { data } = (await res.json()) as {
      data: { name: string; category: string; components: { type: string; text: string }[] }[];
    };
    const hello = data.find((x) => x.name === 'hello_world')!;
    assert.equal(hello.category, 'UTILITY');
    assert.deepEqual(
      hello.components.map((c) => c.type),
      ['HEADER', 'BODY', 'FOOTER'],
    );
    assert.equal(hello.components[0]!.text, 'Hello World');
    assert.match(hello.components[1]!.text, /^Welcome and congratulations!! /);
    assert.ok(!hello.components.some((c) => c.text.includes('{{')), 'no variables');
    await accepted(p, token, numbers[0], template('16505551234', 'hello_world'));
    const withParameter = await send(
      p,
      token,
      numbers[0],
      template('16505551234', 'hello_world', ['Ada']),
    );
    assert.equal(withParameter.status, 400);
    assert.equal((withParameter.body.error as { code: number }).code, 132000);
  });

  test('a send by `recipient` (a BSUID) reaches a username person; statuses name them by `recipient_user_id` only', async (t) => {
    // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { token, numbers } = await granted(p, '5509');
    const [a] = numbers;
    const userId = 'US.13491208655302741918';
    await p.sandbox.cloud.writeIn({ phoneNumberId: a, userId, username: 'ada.l', text: 'hi' });
    const res = await send(p, token, a, {
      recipient: userId,
      type: 'text',
      text: { body: 'Hello Ada' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.contacts, [{ input: userId, user_id: userId }]);
    const wamid = (res.body.messages as { id: string }[])[0]!.id;
    const statuses = await hooks.waitForStatuses(wamid, 3);
    for (const s of statuses) {
      assert.equal(s.recipient_id, undefined, 'no phone for a username person');
      assert.equal(s.recipient_user_id, userId);
      assert.equal(s.errors, undefined, 'inside the window opened by their message');
    }
    // A phone person's statuses carry both.
    const phone = await accepted(p, token, a, template('16505551234', 'hello_world'));
    const [first] = await hooks.waitForStatuses(phone, 1);
    assert.equal(first!.recipient_id, '16505551234');
    assert.match(String(first!.recipient_user_id), /^US\.[0-9]{20}$/);
    // Exactly one of `to` and `recipient`.
    for (const both of [
      { to: '16505551234', recipient: userId, type: 'text', text: { body: 'x' } },
      { type: 'text', text: { body: 'x' } },
    ])
      assert.equal((await send(p, token, a, both)).status, 400);
    assertParsedWhole(hooks);
  });
});
