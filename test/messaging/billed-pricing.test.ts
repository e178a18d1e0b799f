/**
 * Cost truth on both backends, over real HTTP to the sandbox, whose status webhooks carry the
 * Cloud API's per-message `pricing` (docs/decisions/0056-billed-pricing.md): a template the
 * provider bills at a dearer category than Portico reserved is settled at that category (the
 * difference charged, the ledger showing it); a free-form reply inside the customer service
 * window, and a utility template there, are free (their reservation released whole); the
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

    test('inside the customer service window a free-form reply and a utility template are free: their reservation released', async (t) => {
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
        billable: false,
        category: 'service',
        pricingModel: 'PMP',
        type: 'free_customer_service',
        charged: 0,
      });
      assert.deepEqual(await transactionsOf(s, reply.id as string), [
        ['release', 1],
        ['reserve', 1],
      ]);
      const utility = await sendRead(s, hello('+16505553003', s.numbers[0]!));
      assert.deepEqual(utility.pricing, {
        billable: false,
        category: 'utility',
        pricingModel: 'PMP',
        type: 'free_customer_service',
        charged: 0,
      });
      await s.services.messaging.settle();
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 100,
        reserved: 0,
        currency: 'EUR',
      });
    });
  });
}
