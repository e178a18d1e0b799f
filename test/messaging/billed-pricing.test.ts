/**
 * Cost truth on both backends, over real HTTP to the sandbox, whose status webhooks carry the
 * Cloud API's per-message `pricing` (docs/decisions/0056-billed-pricing.md): a template the
 * provider bills at a dearer category than Portico reserved is settled at that category (the
 * difference charged, the ledger showing it); a free-form reply inside the customer service
 * window is charged the text price and a utility template there the utility price (the window
 * makes nothing free); in a free entry point window (a person wrote from an ad, the business
 * answered within 24 hours) every message is free for 72 hours, its reservation released; the
 * message shows Meta's pricing beside Portico's charge; `GET /messaging/reports/costs` gives
 * per day, number and category the estimate beside the charge.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { billedPrice, settlementOf } from '../../src/messaging/credit/billed-pricing.ts';
import { eventually } from '../helpers/instances.ts';
import { hello, messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';

const API = '/api/v1/external/messaging';

test('the billed price: free is 0, a billed category is priced from the table, the difference released or charged', () => {
  const table = { text: 1, MARKETING: 11, UTILITY: 4, AUTHENTICATION: 5 };
  const pmp = (category: string, type = 'regular', billable = true) => ({
    billable,
    category,
    pricingModel: 'PMP',
    type,
  });
  assert.equal(billedPrice(pmp('service', 'free_customer_service', false), 1, table), 0);
  assert.equal(billedPrice(pmp('utility', 'free_entry_point'), 4, table), 0);
  assert.equal(billedPrice(pmp('marketing_lite'), 4, table), 11);
  assert.equal(billedPrice(pmp('authentication_international'), 4, table), 5);
  assert.equal(billedPrice(pmp('something_new'), 4, table), 4, 'an unknown category: reserved');
  assert.equal(billedPrice(pmp('marketing'), 4, undefined), 4, 'no table: reserved');
  assert.deepEqual(settlementOf(11, 4), { capture: 4, release: 7, charge: 0 });
  assert.deepEqual(settlementOf(4, 11), { capture: 4, release: 0, charge: 7 });
  assert.deepEqual(settlementOf(4, 0), { capture: 0, release: 4, charge: 0 });
});

/** Send `body`, wait for its `read` status, and return the message as the API shows it. */
async function sendRead(s: MessagingSetup, body: object) {
  const res = await s.send(body);
  assert.equal(res.statusCode, 202, res.body);
  const id = res.json<{ data: { id: string } }>().data.id;
  await eventually(async () => (await s.message(id)).status === 'read', `${id} read`);
  await s.services.messaging.statusesApplied();
  return s.message(id);
}

async function transactionsOf(s: MessagingSetup, messageId: string) {
  const res = await s.app.inject({
    url: `${API}/credit/transactions?limit=100`,
    headers: { authorization: s.token },
  });
  const items = res.json<{
    data: { items: { kind: string; amount: number; messageId: string }[] };
  }>().data.items;
  return items
    .filter((i) => i.messageId === messageId)
    .map((i) => [i.kind, i.amount])
    .sort();
}

for (const backend of backends()) {
  describe(`billed pricing (${backend.name})`, () => {
    test('a template billed at a dearer category is settled at it; the costs report shows estimate and charge', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 1000 });
      const first = await sendRead(s, hello('+16505553001', s.numbers[0]!));
      assert.deepEqual(first.pricing, {
        billable: true,
        category: 'utility',
        pricingModel: 'PMP',
        type: 'regular',
        charged: 4,
      });
      // The provider now bills the template as marketing; Portico's cached copy still says
      // utility, so it reserves the utility price (4) and the provider's verdict (11) settles.
      const [wabaId] = await s.services.partner.wabaIdsOf(s.portalId);
      const template = s.provider.sandbox.cloud
        .templatesOf(wabaId!)
        .find((x) => x.name === 'hello_world')!;
      template.category = 'MARKETING';
      const second = await sendRead(s, hello('+16505553002', s.numbers[0]!));
      assert.deepEqual(second.price, { amount: 4, currency: 'EUR' });
      assert.deepEqual(second.pricing, {
        billable: true,
        category: 'marketing',
        pricingModel: 'PMP',
        type: 'regular',
        charged: 11,
      });
      assert.deepEqual(await transactionsOf(s, second.id as string), [
        ['capture', 4],
        ['charge', 7],
        ['reserve', 4],
      ]);
      await s.services.messaging.settle();
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 1000 - 4 - 11,
        reserved: 0,
        currency: 'EUR',
      });

      const report = await s.app.inject({
        url: `${API}/reports/costs`,
        headers: { authorization: s.token },
      });
      assert.equal(report.statusCode, 200, report.body);
      const data = report.json<{ data: { currency: string; rows: Record<string, unknown>[] } }>()
        .data;
      assert.equal(data.currency, 'EUR');
      const today = new Date().toISOString().slice(0, 10);
      assert.deepEqual(data.rows, [
        {
          date: today,
          phoneNumberId: s.numbers[0],
          category: 'marketing',
          messages: 1,
          billed: 1,
          billable: 1,
          estimatedMinor: 4,
          chargedMinor: 11,
        },
        {
          date: today,
          phoneNumberId: s.numbers[0],
          category: 'utility',
          messages: 1,
          billed: 1,
          billable: 1,
          estimatedMinor: 4,
          chargedMinor: 4,
        },
      ]);
      const wrong = await s.app.inject({
        url: `${API}/reports/costs?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z`,
        headers: { authorization: s.token },
      });
      assert.equal(wrong.statusCode, 400, wrong.body);
    });

    test('inside the customer service window a free-form reply is charged the text price and a utility template the utility price', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 100 });
      await s.provider.sandbox.cloud.writeIn({
        phoneNumberId: s.numbers[0]!,
        from: '16505553003',
        text: 'Where is my parcel?',
      });
      const reply = await sendRead(s, {
        to: '+16505553003',
        from: s.numbers[0],
        type: 'text',
        text: { body: 'On its way.' },
      });
      assert.deepEqual(reply.price, { amount: 1, currency: 'EUR' });
      assert.deepEqual(reply.pricing, {
        billable: true,
        category: 'service',
        pricingModel: 'PMP',
        type: 'regular',
        charged: 1,
      });
      assert.deepEqual(await transactionsOf(s, reply.id as string), [
        ['capture', 1],
        ['reserve', 1],
      ]);
      const utility = await sendRead(s, hello('+16505553003', s.numbers[0]!));
      assert.deepEqual(utility.pricing, {
        billable: true,
        category: 'utility',
        pricingModel: 'PMP',
        type: 'regular',
        charged: 4,
      });
      await s.services.messaging.settle();
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 100 - 1 - 4,
        reserved: 0,
        currency: 'EUR',
      });
    });
    test('a person who wrote from an ad and was answered within 24 hours: 72 hours free, then billed', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 100 });
      const sandbox = s.provider.sandbox;
      const HOUR = 3600 * 1000;
      const person = '16505553004';
      const text = (body: string) => ({
        to: `+${person}`,
        from: s.numbers[0],
        type: 'text',
        text: { body },
      });
      const free = (category: string) => ({
        billable: false,
        category,
        pricingModel: 'PMP',
        type: 'free_entry_point',
        charged: 0,
      });
      const billed = (category: string, charged: number) => ({
        billable: true,
        category,
        pricingModel: 'PMP',
        type: 'regular',
        charged,
      });
      const writeIn = (message: object) =>
        sandbox.cloud.writeIn({ phoneNumberId: s.numbers[0]!, from: person, ...message });
      // The provider's clock starts 60 hours back, so that the window's end (72 hours after the
      // answer) falls within what Portico accepts of status timestamps (36 hours ahead).
      sandbox.advanceTime(-60 * HOUR);
      await writeIn({
        message: {
          type: 'text',
          text: { body: 'Is the sale still on?' },
          referral: { source_url: 'https://fb.me/3cr4Wqqkv', source_id: '1202', source_type: 'ad' },
        },
      });
      // The answer opens the free entry point window: free, its reservation released whole.
      const answer = await sendRead(s, hello(`+${person}`, s.numbers[0]!));
      assert.deepEqual(answer.price, { amount: 4, currency: 'EUR' });
      assert.deepEqual(answer.pricing, free('utility'));
      assert.deepEqual(await transactionsOf(s, answer.id as string), [
        ['release', 4],
        ['reserve', 4],
      ]);
      // 50 hours later, still inside it: the person writes again; a free-form reply and a
      // template are free too.
      sandbox.advanceTime(50 * HOUR);
      await writeIn({ text: 'And delivery?' });
      const reply = await sendRead(s, text('Free, this week.'));
      assert.deepEqual(reply.pricing, free('service'));
      assert.deepEqual(await transactionsOf(s, reply.id as string), [
        ['release', 1],
        ['reserve', 1],
      ]);
      const template = await sendRead(s, hello(`+${person}`, s.numbers[0]!));
      assert.deepEqual(template.pricing, free('utility'));
      await s.services.messaging.settle();
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 100,
        reserved: 0,
        currency: 'EUR',
      });
      // 75 hours after the answer the window has closed: billed again.
      sandbox.advanceTime(25 * HOUR);
      const after = await sendRead(s, hello(`+${person}`, s.numbers[0]!));
      assert.deepEqual(after.pricing, billed('utility', 4));
      await writeIn({ text: 'Thanks!' });
      const last = await sendRead(s, text('You are welcome.'));
      assert.deepEqual(last.pricing, billed('service', 1));
      await s.services.messaging.settle();
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 100 - 4 - 1,
        reserved: 0,
        currency: 'EUR',
      });
    });
  });
}
