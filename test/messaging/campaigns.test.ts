/**
 * Campaigns on both backends, against the sandbox provider over real HTTP: creation and its
 * refusals, keyset lists, the audience snapshot with its skip reasons, the estimate and the 402
 * start, the runner handing recipients to the send path at the pace (statuses coming back as
 * the provider's webhooks), pause, resume and cancel (credit released), the report as JSON and
 * CSV, and a recipient claimed by an instance that died sent once.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { parse } from 'csv-parse/sync';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { eventually } from '../helpers/instances.ts';
import { messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

const CAMPAIGNS = '/api/v1/external/messaging/campaigns';

type Json = Record<string, unknown> & {
  id: string;
  status: string;
  counts: {
    [
      k in
        | 'recipients'
        | 'skipped'
        | 'queued'
        | 'sent'
        | 'delivered'
        | 'read'
        | 'failed'
        | 'replied'
        | 'optedOut'
    ]: number;
  };
  skippedBy: Record<string, number>;
  cost: { estimated: number | null; spent: number; currency: string | null };
};

function api(s: MessagingSetup) {
  const call = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    s.app.inject({
      method,
      url,
      headers: { authorization: s.token },
      ...(payload && { payload }),
    });
  return {
    call,
    async contact(phone: string, input: Record<string, unknown> = {}) {
      const res = await call('POST', '/api/v1/external/crm/contacts', { phone, ...input });
      assert.equal(res.statusCode, 201, res.body);
      return res.json<{ data: { id: string } }>().data.id;
    },
    async create(body: Record<string, unknown>) {
      return call('POST', CAMPAIGNS, {
        name: 'Offers',
        from: s.numbers[0],
        template: { name: 'greeting', language: 'en_US', parameters: ['there'] },
        audience: { tag: 'vip' },
        ...body,
      });
    },
    async get(id: string): Promise<Json> {
      return (await call('GET', `${CAMPAIGNS}/${id}`)).json<{ data: Json }>().data;
    },
    move: (id: string, verb: string) => call('POST', `${CAMPAIGNS}/${id}/${verb}`),
  };
}

/** This app's runner (not started: `runOnce` drives it, as one instance's batch). */
const runnerOf = (s: MessagingSetup) => s.services.campaignRunner;

for (const backend of backends()) {
  describe(`campaigns (${backend.name})`, () => {
    test('refusals at creation: past schedule, template, number, empty audience, pace', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const a = api(s);
      await a.contact('+16505550101', { tags: ['vip'] });
      const past = await a.create({ schedule: { at: '2020-01-01T00:00:00.000Z' } });
      assert.equal(past.statusCode, 400, past.body);
      assert.equal(past.json().error.details[0].field, 'body.schedule.at');

      const unknown = await a.create({ template: { name: 'no_such', language: 'en_US' } });
      assert.equal(unknown.statusCode, 422, unknown.body);
      assert.equal(unknown.json().error.code, 'template_not_approved');
      for (const wabaId of await s.services.partner.wabaIdsOf(s.portalId))
        for (const tpl of s.provider.sandbox.cloud.templatesOf(wabaId))
          if (tpl.name === 'greeting') tpl.status = 'PAUSED';
      s.services.messagingProvider.invalidate(s.portalId);
      const paused = await a.create({});
      assert.equal(paused.statusCode, 422, paused.body);
      assert.match(paused.json().error.message, /paused/);
      for (const wabaId of await s.services.partner.wabaIdsOf(s.portalId))
        for (const tpl of s.provider.sandbox.cloud.templatesOf(wabaId))
          if (tpl.name === 'greeting') tpl.status = 'APPROVED';
      s.services.messagingProvider.invalidate(s.portalId);

      const empty = await a.create({ audience: { tag: 'nobody' } });
      assert.equal(empty.statusCode, 400, empty.body);
      assert.equal(empty.json().error.details[0].field, 'body.audience');

      const fast = await a.create({ pace: { perSecond: 500 } });
      assert.equal(fast.statusCode, 400, fast.body);
      assert.match(fast.json().error.message, /throughput of 80 messages per second/);

      await queryRows(
        s.services.storage,
        sql`update number_onboarding set registered = false where phone_number_id = ${s.numbers[0]!}`,
      );
      const notReady = await a.create({});
      assert.equal(notReady.statusCode, 409, notReady.body);
      assert.equal(notReady.json().error.code, 'number_not_ready');
      const [count] = await queryRows<{ n: number }>(
        s.services.storage,
        sql`select count(*)::int as n from campaigns`,
      );
      assert.equal(Number(count!.n), 0, 'nothing stored');
    });

    test('create, list, change; the snapshot skips with reasons; 402 with the shortfall', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false, credit: 3 });
      const a = api(s);
      await a.contact('+16505550201', { tags: ['vip'], firstName: 'Ada' });
      await a.contact('+16505550202', { tags: ['vip'] });
      await a.contact('+16505550203', {
        tags: ['vip'],
        firstName: 'Eve',
        consent: { whatsapp: 'opted_out' },
      });
      const first = await a.create({ name: 'First' });
      assert.equal(first.statusCode, 201, first.body);
      const created = first.json<{ data: Json }>().data;
      assert.match(created.id, /^cmp_/);
      assert.equal(created.status, 'draft');
      const second = (await a.create({ name: 'Second' })).json<{ data: Json }>().data;
      const page1 = (await a.call('GET', `${CAMPAIGNS}?limit=1`)).json().data;
      assert.deepEqual(
        page1.items.map((c: Json) => c.id),
        [second.id],
      );
      const page2 = (await a.call('GET', `${CAMPAIGNS}?limit=1&cursor=${page1.nextCursor}`)).json()
        .data;
      assert.deepEqual(
        page2.items.map((c: Json) => c.id),
        [created.id],
      );
      assert.equal(page2.nextCursor, null);

      const changed = await a.call('PATCH', `${CAMPAIGNS}/${created.id}`, {
        template: {
          name: 'greeting',
          language: 'en_US',
          parameters: [{ contact: 'firstName' }],
        },
      });
      assert.equal(changed.statusCode, 200, changed.body);

      // UTILITY costs 4: one eligible recipient is 4, above the 3 of credit.
      const refused = await a.move(created.id, 'start');
      assert.equal(refused.statusCode, 402, refused.body);
      assert.match(refused.json().error.message, /at 4 minor units .* 3 are available: 1 short/);
      const after = await a.get(created.id);
      assert.equal(after.status, 'draft');
      assert.equal(after.counts.recipients, 1, 'Ada only: no name without fallback, Eve out');
      assert.deepEqual(after.skippedBy, { opted_out: 1, missing_parameter: 1 });
      assert.equal(after.cost.estimated, 4);
      await s.services.messaging.addCredit({
        portalId: s.portalId,
        amount: 2,
        note: 'top-up',
        actor: CLI_ACTOR,
      });
      // Now covered (4 ≤ 5): it runs.
      const started = await a.move(created.id, 'start');
      assert.equal(started.statusCode, 200, started.body);
      assert.equal(started.json().data.status, 'running');
      const edit = await a.call('PATCH', `${CAMPAIGNS}/${created.id}`, { name: 'x' });
      assert.equal(edit.statusCode, 409);
      const audit = await queryRows<{ action: string }>(
        s.services.storage,
        sql`select action from audit_events where portal_id = ${s.portalId}
          and action like 'campaign.%' order by id`,
      );
      assert.deepEqual(
        audit.map((r) => r.action),
        ['campaign.created', 'campaign.created', 'campaign.changed', 'campaign.started'],
      );
    });

    test('runs at its pace to the provider; counts, report and CSV; pause, resume', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 1000 });
      const a = api(s);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push(await a.contact(`+1650555030${i}`, { firstName: `P${i}` }));
      const res = await a.create({
        audience: { contactIds: [...ids, ids[0]!, 'ctc_gone0000'] },
        template: {
          name: 'greeting',
          language: 'en_US',
          parameters: [{ contact: 'firstName', fallback: 'there' }],
        },
        pace: { perSecond: 2 },
      });
      assert.equal(res.statusCode, 201, res.body);
      const id = res.json<{ data: Json }>().data.id;
      assert.equal((await a.move(id, 'start')).statusCode, 200);
      const c = await a.get(id);
      assert.equal(c.counts.recipients, 5);
      assert.deepEqual(c.skippedBy, { duplicate: 1, erased: 1 });

      const runner = runnerOf(s);
      assert.equal(await runner.runOnce(), 2, 'one slot: the pace');
      assert.equal((await a.move(id, 'pause')).statusCode, 200);
      await new Promise((r) => setTimeout(r, 1100));
      assert.equal(await runner.runOnce(), 0, 'paused: nothing handed over');
      const paused = await a.get(id);
      assert.equal(paused.status, 'paused');
      assert.equal(paused.counts.queued + paused.counts.sent, 2);
      assert.equal((await a.move(id, 'resume')).statusCode, 200);
      runner.start();
      t.after(() => runner.stop());

      await eventually(async () => (await a.get(id)).status === 'completed', 'it completes');
      await eventually(
        async () => (await a.get(id)).counts.read === 5,
        'every message read (sandbox statuses)',
      );
      const done = await a.get(id);
      assert.equal(done.counts.sent, 5);
      assert.equal(done.counts.delivered, 5);
      assert.equal(done.counts.failed, 0);
      assert.equal(done.cost.spent, 20);
      const params = s.provider.sandbox.cloud.messages
        .map((m) => (m.template as { params?: string[] } | undefined)?.params?.[0] ?? '')
        .sort();
      assert.deepEqual(params, ['P0', 'P1', 'P2', 'P3', 'P4']);

      const report = (await a.call('GET', `${CAMPAIGNS}/${id}/report?limit=3`)).json().data;
      assert.deepEqual(
        report.recipients.map((r: { outcome: string }) => r.outcome),
        ['read', 'read', 'read'],
      );
      assert.equal(report.nextAfter, 3);
      const csv = await s.app.inject({
        url: `${CAMPAIGNS}/${id}/report`,
        headers: { authorization: s.token, accept: 'text/csv' },
      });
      assert.equal(csv.statusCode, 200, csv.body);
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      const rows = parse<Record<string, string>>(csv.body, { columns: true });
      assert.equal(rows.length, 6, 'the five sent and the erased id skipped');
      assert.deepEqual(
        rows.map((r) => `${r.outcome}:${r.reason}`),
        [...Array<string>(5).fill('read:'), 'skipped:erased'],
      );
      assert.deepEqual(Object.keys(rows[0]!), [
        'seq',
        'contactId',
        'outcome',
        'reason',
        'messageId',
      ]);
    });

    test('cancel: nothing more handed over, queued messages fail and release their credit', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false, credit: 100 });
      const a = api(s);
      for (let i = 0; i < 4; i++) await a.contact(`+1650555040${i}`, { tags: ['vip'] });
      const id = (await a.create({ pace: { perSecond: 2 } })).json<{ data: Json }>().data.id;
      assert.equal((await a.move(id, 'start')).statusCode, 200);
      const runner = runnerOf(s);
      assert.equal(await runner.runOnce(), 2);
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 100,
        reserved: 8,
        currency: 'EUR',
      });
      const cancelled = await a.move(id, 'cancel');
      assert.equal(cancelled.statusCode, 200, cancelled.body);
      assert.equal(cancelled.json().data.status, 'cancelled');
      await new Promise((r) => setTimeout(r, 1100));
      assert.equal(await runner.runOnce(), 0);
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 100,
        reserved: 0,
        currency: 'EUR',
      });
      const report = (await a.call('GET', `${CAMPAIGNS}/${id}/report`)).json().data;
      assert.deepEqual(
        report.recipients.map((r: { outcome: string }) => r.outcome),
        ['failed', 'failed', 'cancelled', 'cancelled'],
      );
      assert.deepEqual(report.failedBy, [{ code: 'campaign_cancelled', count: 2 }]);
      assert.equal((await a.move(id, 'resume')).statusCode, 409);
    });

    test('a recipient claimed by an instance that died is sent once', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false, credit: 100 });
      const a = api(s);
      await a.contact('+16505550501', { tags: ['vip'] });
      await a.contact('+16505550502', { tags: ['vip'] });
      const id = (await a.create({})).json<{ data: Json }>().data.id;
      assert.equal((await a.move(id, 'start')).statusCode, 200);
      // As if an instance had claimed recipient 1 and sent it, then was killed (kill -9) before
      // recording the message: the send path holds it under the recipient's key.
      const [r1] = await queryRows<{ contact_id: string }>(
        s.services.storage,
        sql`update campaign_recipients set state = 'sending', claimed_at = now() - interval '2 minutes'
          where campaign_id = ${id} and seq = 1 returning contact_id`,
      );
      const first = await s.services.messaging.sendMessage({
        principal: { portalId: s.portalId },
        input: {
          type: 'template',
          contactId: r1!.contact_id,
          from: s.numbers[0],
          template: { name: 'greeting', language: 'en_US', parameters: ['there'] },
        } as never,
        idempotencyKey: `campaign:${id}:1`,
      });
      const runner = runnerOf(s);
      await runner.runOnce();
      await eventually(async () => {
        if ((await a.get(id)).status === 'completed') return true;
        await runner.runOnce();
        return false;
      }, 'it completes');
      const rows = await queryRows<{ seq: number; message_id: string }>(
        s.services.storage,
        sql`select seq, message_id from campaign_recipients where campaign_id = ${id} order by seq`,
      );
      assert.equal(rows[0]!.message_id, first.body.data.id, 'the first message, replayed');
      const [messages] = await queryRows<{ n: number }>(
        s.services.storage,
        sql`select count(*)::int as n from messages where portal_id = ${s.portalId}`,
      );
      assert.equal(Number(messages!.n), 2, 'one message per recipient');
    });
  });
}
