/**
 * Sending end to end on both backends, against the sandbox provider over real HTTP: the API
 * queues, the delivery worker sends, the sandbox's signed status webhooks come back to the
 * app's receiver and move the message to read; refusals, idempotency, failures and retries.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createPortal } from '../helpers/app.ts';
import { eventually } from '../helpers/instances.ts';
import { greeting, hello, messagingSetup, MESSAGES } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';

for (const backend of backends()) {
  describe(`messaging: send (${backend.name})`, () => {
    test('template → queued → sent → delivered → read; price captured; sent once', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 100 });
      const res = await s.send(greeting('+16505551234', s.numbers[0]!, 'Ada'));
      assert.equal(res.statusCode, 202, res.body);
      const queued = res.json().data;
      assert.equal(queued.status, 'queued');
      assert.deepEqual(queued.price, { amount: 4, currency: 'EUR' });
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 100,
        reserved: 4,
        currency: 'EUR',
      });

      await eventually(
        async () => (await s.message(queued.id)).status === 'read',
        'the message is read',
      );
      const read = await s.message(queued.id);
      assert.match(String(read.providerMessageId), /^wamid\./);
      for (const k of ['sentAt', 'deliveredAt', 'readAt']) assert.ok(read[k], k);
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 96,
        reserved: 0,
        currency: 'EUR',
      });
      assert.equal(s.provider.sandbox.cloud.sendsOf(queued.id), 1);
      const received = s.provider.sandbox.cloud.messages.find(
        (m) => m.wamid === read.providerMessageId,
      );
      assert.deepEqual(received?.template, {
        name: 'greeting',
        language: 'en_US',
        params: ['Ada'],
      });

      const list = await s.app.inject({
        url: `${MESSAGES}?status=read&to=%2B16505551234`,
        headers: { authorization: s.token },
      });
      assert.deepEqual(
        list.json().data.items.map((m: { id: string }) => m.id),
        [queued.id],
      );
      const summary = await s.app.inject({
        url: `/api/v1/external/messaging/reports/summary?since=${new Date(Date.now() - 3600_000).toISOString()}&until=${new Date(Date.now() + 60_000).toISOString()}&granularity=hour`,
        headers: { authorization: s.token },
      });
      const periods = summary.json().data.periods as {
        counts: { read: number };
        deliveryRate: number;
        cost: { amount: number };
      }[];
      assert.equal(
        periods.reduce((n, p) => n + p.counts.read, 0),
        1,
      );
      assert.equal(periods.at(-1)!.deliveryRate, 1);
      assert.equal(
        periods.reduce((n, p) => n + p.cost.amount, 0),
        4,
      );
      // Without a period: the last 30 days by day, up to now, which holds the message too.
      const recent = await s.app.inject({
        url: '/api/v1/external/messaging/reports/summary',
        headers: { authorization: s.token },
      });
      assert.equal(recent.statusCode, 200);
      const days = recent.json().data.periods as { counts: { read: number } }[];
      assert.equal(
        days.reduce((n, p) => n + p.counts.read, 0),
        1,
      );
    });

    test('free text: outside the window until the person writes in, then delivered', async (t) => {
      const s = await messagingSetup(t, backend);
      const text = {
        to: '+16505552222',
        from: s.numbers[0],
        type: 'text',
        text: { body: 'Your order shipped' },
      };
      const refused = await s.send(text);
      assert.equal(refused.statusCode, 422);
      assert.equal(refused.json().error.code, 'outside_service_window');
      assert.match(refused.json().error.message, /template/);
      await s.provider.sandbox.cloud.writeIn({
        phoneNumberId: s.numbers[0]!,
        from: '16505552222',
        text: 'hi',
      });
      const accepted = await s.send(text);
      assert.equal(accepted.statusCode, 202, accepted.body);
      await eventually(
        async () => (await s.message(accepted.json().data.id)).status === 'read',
        'delivered and read',
      );
      assert.deepEqual((await s.message(accepted.json().data.id)).text, {
        body: 'Your order shipped',
      });
    });

    test('free text queued in the window and sent after it closed: the provider accepts it, then fails it with 131047; credit released', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 100, workers: false });
      await s.provider.sandbox.cloud.writeIn({
        phoneNumberId: s.numbers[0]!,
        from: '16505552323',
        text: 'Can you call me?',
      });
      const res = await s.send({
        to: '+16505552323',
        from: s.numbers[0],
        type: 'text',
        text: { body: 'We will call you tomorrow.' },
      });
      assert.equal(res.statusCode, 202, res.body);
      const id = res.json().data.id as string;
      // The message waits in the queue until the window has closed (on the provider's clock).
      s.provider.sandbox.advanceTime(25 * 3600 * 1000);
      await s.services.messaging.startWorkers();
      await eventually(
        async () => (await s.message(id)).status === 'failed',
        'failed by its status webhook',
      );
      const failed = await s.message(id);
      assert.match(String(failed.providerMessageId), /^wamid\./, 'the provider accepted it');
      assert.deepEqual(failed.error, { code: 131047, title: 'Re-engagement message' });
      assert.equal(s.provider.sandbox.cloud.sendsOf(id), 1);
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 100,
        reserved: 0,
        currency: 'EUR',
      });
    });

    test('refusals each with its code, in order; nothing queued or reserved', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 5, workers: false });
      const contact = await s.app.inject({
        method: 'POST',
        url: '/api/v1/external/crm/contacts',
        headers: { authorization: s.token },
        payload: { phone: '+16505553333', consent: { whatsapp: 'opted_out' } },
      });
      const contactId = contact.json().data.id as string;
      const cases: [object, number, string][] = [
        [{ ...hello('+16505551234', s.numbers[0]!), from: undefined }, 400, 'invalid_request'],
        [{ ...hello('+16505551234', '999'), contactId: undefined }, 400, 'invalid_request'],
        [
          {
            contactId,
            from: s.numbers[0],
            type: 'template',
            template: { name: 'hello_world', language: 'en_US' },
          },
          422,
          'recipient_opted_out',
        ],
        [
          {
            ...hello('+16505551234', s.numbers[0]!),
            template: { name: 'nope', language: 'en_US' },
          },
          422,
          'template_not_approved',
        ],
        [
          {
            ...hello('+16505551234', s.numbers[0]!),
            template: { name: 'hello_world', language: 'fr' },
          },
          422,
          'template_not_approved',
        ],
      ];
      for (const [body, status, code] of cases) {
        const res = await s.send(JSON.parse(JSON.stringify(body)) as object);
        assert.equal(res.statusCode, status, `${code}: ${res.body}`);
        assert.equal(res.json().error.code, code);
      }
      // Credit for one (price 4 of 5), not for two.
      assert.equal((await s.send(hello('+16505551234', s.numbers[0]!))).statusCode, 202);
      const broke = await s.send(hello('+16505551235', s.numbers[0]!));
      assert.equal(broke.statusCode, 402);
      assert.equal(broke.json().error.code, 'insufficient_credit');
      assert.equal(await s.services.messaging.waitingJobs(), 1);
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 5,
        reserved: 4,
        currency: 'EUR',
      });
      // Without a connection: 409 first.
      await s.services.partner.revokeConnection(s.portalId, {
        actor: { type: 'system', id: 'test' },
        reason: 'disconnect',
      });
      const off = await s.send(hello('+16505551234', s.numbers[0]!));
      assert.equal(off.json().error.code, 'not_connected');
    });

    test('with no credit, an opted-out or bad-template send says why, not 402', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 0, workers: false });
      const contact = await s.app.inject({
        method: 'POST',
        url: '/api/v1/external/crm/contacts',
        headers: { authorization: s.token },
        payload: { phone: '+16505553334', consent: { whatsapp: 'opted_out' } },
      });
      assert.equal(contact.statusCode, 201, contact.body);
      const optedOut = await s.send(hello('+16505553334', s.numbers[0]!));
      assert.equal(optedOut.statusCode, 422, optedOut.body);
      assert.equal(optedOut.json().error.code, 'recipient_opted_out');
      const badTemplate = await s.send({
        ...hello('+16505551234', s.numbers[0]!),
        template: { name: 'nope', language: 'en_US' },
      });
      assert.equal(badTemplate.statusCode, 422, badTemplate.body);
      assert.equal(badTemplate.json().error.code, 'template_not_approved');
      // A send that passes every check is refused for the credit.
      const broke = await s.send(hello('+16505551234', s.numbers[0]!));
      assert.equal(broke.statusCode, 402, broke.body);
      assert.equal(broke.json().error.code, 'insufficient_credit');
      assert.equal(await s.services.messaging.waitingJobs(), 0);
    });

    test('a recipient `to` holding a control character is refused as a contact phone is', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      for (const to of ['+1650555\u00001234', '+16505551234\n', '+1 650 555 1234 ext. 5']) {
        const res = await s.send(hello(to, s.numbers[0]!));
        assert.equal(res.statusCode, 400, `${JSON.stringify(to)}: ${res.body}`);
        assert.equal(res.json().error.details[0].field, 'body.to');
      }
      assert.equal(await s.services.messaging.waitingJobs(), 0);
    });

    test("a send by `to` to an opted-out contact's phone is refused", async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const contact = await s.app.inject({
        method: 'POST',
        url: '/api/v1/external/crm/contacts',
        headers: { authorization: s.token },
        payload: { phone: '+16505553333', consent: { whatsapp: 'opted_out' } },
      });
      assert.equal(contact.statusCode, 201);
      const res = await s.send(hello('+1 650-555-3333', s.numbers[0]!));
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json().error.code, 'recipient_opted_out');
      assert.equal(await s.services.messaging.waitingJobs(), 0);
    });

    test('free text: the window is 24 hours, and per business phone number', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const text = (from: string) => ({
        to: '+16505552222',
        from,
        type: 'text',
        text: { body: 'Your order shipped' },
      });
      const writeIn = (phoneNumberId: string, hoursAgo: number) =>
        s.services.messaging.webhookSink.inboundMessages(s.portalId, phoneNumberId, [
          {
            wamid: `wamid.in${hoursAgo}${phoneNumberId}`,
            from: '16505552222',
            timestamp: new Date(Date.now() - hoursAgo * 3600_000),
            type: 'text',
            content: { type: 'text', text: { body: 'hi' } },
          },
        ]);
      // 25 hours after the person's last message: closed.
      await writeIn(s.numbers[0]!, 25);
      let res = await s.send(text(s.numbers[0]!));
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json().error.code, 'outside_service_window');
      // 23 hours: open, with that number only.
      await writeIn(s.numbers[0]!, 23);
      res = await s.send(text(s.numbers[0]!));
      assert.equal(res.statusCode, 202, res.body);
      res = await s.send(text(s.numbers[1]!));
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json().error.code, 'outside_service_window');
      assert.equal(await s.services.messaging.waitingJobs(), 1);
    });

    test("templates are read in the sender number's WABA: approval and price", async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const [wabaA, wabaB] = await s.services.partner.wabaIdsOf(s.portalId);
      const template = (name: string, category: 'MARKETING' | 'UTILITY') => ({
        id: `${name}${category}`,
        name,
        language: 'en_US',
        category,
        status: 'APPROVED',
        components: [{ type: 'BODY', text: 'Hi' }],
        appId: undefined,
      });
      const cloud = s.provider.sandbox.cloud;
      cloud.templatesOf(wabaB!).push(template('only_b', 'UTILITY'), template('mixed', 'UTILITY'));
      cloud.templatesOf(wabaA!).push(template('mixed', 'MARKETING'));
      const numbers = await s.services.messagingProvider.numbers(s.portalId);
      const fromA = numbers.find((n) => n.wabaId === wabaA)!.id;
      const fromB = numbers.find((n) => n.wabaId === wabaB)!.id;
      const send = (name: string, from: string) =>
        s.send({
          to: '+16505551234',
          from,
          type: 'template',
          template: { name, language: 'en_US' },
        });
      const refused = await send('only_b', fromA);
      assert.equal(refused.statusCode, 422, refused.body);
      assert.equal(refused.json().error.code, 'template_not_approved');
      assert.equal((await send('only_b', fromB)).statusCode, 202);
      const marketing = await send('mixed', fromA);
      assert.deepEqual(marketing.json().data.price, { amount: 11, currency: 'EUR' });
      const utility = await send('mixed', fromB);
      assert.deepEqual(utility.json().data.price, { amount: 4, currency: 'EUR' });
    });

    test("another portal's token sees none of this portal's messages, counts or credit", async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const sent = await s.send(hello('+16505551234', s.numbers[0]!));
      assert.equal(sent.statusCode, 202);
      const id = sent.json().data.id as string;
      const other = await createPortal(s.services);
      const get = (url: string) =>
        s.app.inject({
          url: `/api/v1/external/messaging${url}`,
          headers: { authorization: other.token },
        });
      const byId = await get(`/messages/${id}`);
      assert.equal(byId.statusCode, 404);
      assert.equal(byId.json().error.code, 'not_found');
      assert.ok(!byId.body.includes('6505551234'));
      assert.deepEqual((await get('/messages')).json().data.items, []);
      const summary = (await get('/reports/summary')).json().data.periods as {
        counts: Record<string, number>;
        cost: { amount: number };
      }[];
      assert.equal(
        summary.reduce((n, p) => n + Object.values(p.counts).reduce((a, b) => a + b, 0), 0),
        0,
      );
      assert.deepEqual((await get('/credit/transactions')).json().data.items, []);
      // The same requests with the owner's token see them (the checks above can fail).
      const own = (url: string) =>
        s.app.inject({
          url: `/api/v1/external/messaging${url}`,
          headers: { authorization: s.token },
        });
      assert.equal((await own(`/messages/${id}`)).statusCode, 200);
      assert.equal((await own('/messages')).json().data.items.length, 1);
      assert.equal((await own('/credit/transactions')).json().data.items.length, 2);
    });

    test('Idempotency-Key: a retry replays, another body conflicts', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const body = hello('+16505551234', s.numbers[0]!);
      const first = await s.send(body, { 'idempotency-key': 'order-1' });
      const again = await s.send(body, { 'idempotency-key': 'order-1' });
      assert.equal(again.statusCode, 202);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.json().data.id, first.json().data.id);
      const other = await s.send(hello('+16505559999', s.numbers[0]!), {
        'idempotency-key': 'order-1',
      });
      assert.equal(other.statusCode, 409);
      assert.equal(other.json().error.code, 'idempotency_conflict');
      assert.equal(await s.services.messaging.waitingJobs(), 1);
    });

    test('20 concurrent sends with credit for 5: exactly 5 accepted', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 20, workers: false });
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          s.send(hello(`+1650555${String(4000 + i)}`, s.numbers[0]!)),
        ),
      );
      const codes = results.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [...Array(5).fill(202), ...Array(15).fill(402)]);
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 20,
        reserved: 20,
        currency: 'EUR',
      });
      assert.equal(await s.services.messaging.waitingJobs(), 5);
    });
  });
}
