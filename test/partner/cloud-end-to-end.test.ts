/**
 * Sandbox → app, end to end over real HTTP: a send through the partner's outbound path
 * (`withCloudApi`) comes back as signed `sent` / `delivered` / `read` webhooks at the sink with
 * its `biz_opaque_callback_data`; a `0000` recipient fails with 131026; `POST /sandbox/inbound`
 * arrives as an inbound event; a template's review arrives as a status update; a dead token met
 * on a Cloud API call revokes the connection.
 */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { listAuditEvents } from '../../src/audit/audit-log.ts';
import { ProviderError } from '../../src/partner/provider-error.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { connectPortal, startTestProvider } from '../helpers/provider.ts';
import { backends, type Backend } from '../helpers/storage.ts';
import { recordingSink } from '../helpers/webhook-sink.ts';
import { deadline } from '../helpers/deadlines.ts';

async function until<T>(what: string, probe: () => T | undefined, ms = 10_000): Promise<T> {
  const giveUp = Date.now() + deadline(ms);
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > giveUp) assert.fail(`timed out waiting for ${what}`);
    await delay(20);
  }
}

async function connected(ctx: Parameters<typeof buildTestApp>[0], backend: Backend) {
  const p = await startTestProvider(ctx);
  const { sink, recorded } = recordingSink();
  const t = await buildTestApp(ctx, backend, p.env, { providerWebhookSink: sink });
  const baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  p.sandbox.configureApp(p.appId, { webhookUrl: `${baseUrl}/api/provider/webhooks` });
  const portal = await createPortal(t.services);
  const portalId = await t.services.accounts.portalIdFor(portal.portalCode);
  const result = await connectPortal(t.services, p, {
    portalId,
    userId: portal.userId,
    providerUserId: '100066666',
  });
  assert.deepEqual(result, { ok: true });
  const [wabaId] = await t.services.partner.wabaIdsOf(portalId);
  const numbers = await t.services.partner.withCloudApi(portalId, 'numbers', (cloud) =>
    cloud.listPhoneNumbers(wabaId!),
  );
  return { p, t, recorded, portalId, wabaId: wabaId!, phoneNumberId: numbers[0]!.id };
}

/** The sandbox's `hello_world`, as the provider's own: no variables. */
const HELLO = { name: 'hello_world', language: { code: 'en_US' } };

for (const backend of backends()) {
  describe(`Cloud API end to end (${backend.name})`, () => {
    test('a send → sent, delivered, read at the sink with its callback data; a 0000 recipient → failed 131026', async (t) => {
      const c = await connected(t, backend);
      const send = (to: string, data: string) =>
        c.t.services.partner.withCloudApi(c.portalId, 'message send', (cloud) =>
          cloud.sendMessage(c.phoneNumberId, { to, type: 'template', template: HELLO }, data),
        );
      const ok = await send('+16505551234', 'msg_ok');
      const bad = await send('+16505550000', 'msg_bad');
      const statusesOf = (wamid: string) =>
        c.recorded.flatMap((r) =>
          r.kind === 'statuses' && r.portalId === c.portalId && r.phoneNumberId === c.phoneNumberId
            ? r.events.filter((e) => e.wamid === wamid)
            : [],
        );
      const okEvents = await until('read', () => {
        const events = statusesOf(ok.wamid);
        return events.some((e) => e.status === 'read') ? events : undefined;
      });
      assert.deepEqual(
        okEvents.map((e) => e.status),
        ['sent', 'delivered', 'read'],
      );
      for (const e of okEvents) {
        assert.equal(e.bizOpaqueCallbackData, 'msg_ok');
        assert.equal(e.recipientId, '16505551234');
        assert.deepEqual(e.pricing, {
          billable: true,
          category: 'utility',
          pricingModel: 'PMP',
          type: 'regular',
        });
        assert.deepEqual(e.errors, []);
      }
      const failed = await until('failed', () => statusesOf(bad.wamid)[0]);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.bizOpaqueCallbackData, 'msg_bad');
      assert.deepEqual(failed.errors, [{ code: 131026, title: 'Message undeliverable' }]);
      assert.deepEqual(c.p.sandbox.cloud.stats().duplicates, 0);
      assert.ok(
        c.p.sandbox.cloud.deliveries.every((d) => d.status === 200),
        JSON.stringify(c.p.sandbox.cloud.deliveries),
      );
    });

    test('POST /sandbox/inbound → an inbound event, acknowledged; then text may be sent; a template review → status update', async (t) => {
      const c = await connected(t, backend);
      const res = await fetch(`${c.p.sandbox.url}/sandbox/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          phoneNumberId: c.phoneNumberId,
          from: '447700900123',
          text: 'Is my order ready?',
          name: 'Grace',
        }),
      });
      assert.equal(res.status, 200);
      const { wamid } = (await res.json()) as { wamid: string };
      const inbound = c.recorded.find((r) => r.kind === 'inbound');
      assert.ok(inbound?.kind === 'inbound', 'delivered before the sandbox answered');
      assert.equal(inbound.portalId, c.portalId);
      assert.equal(inbound.phoneNumberId, c.phoneNumberId);
      assert.deepEqual(
        inbound.events.map((e) => [e.wamid, e.from, e.type, e.content, e.profileName]),
        [
          [
            wamid,
            '447700900123',
            'text',
            { type: 'text', text: { body: 'Is my order ready?' } },
            'Grace',
          ],
        ],
      );
      const reply = await c.t.services.partner.withCloudApi(c.portalId, 'send', (cloud) =>
        cloud.sendMessage(
          c.phoneNumberId,
          { to: '+447700900123', type: 'text', text: { body: 'Yes!' } },
          'msg_reply',
        ),
      );
      assert.match(reply.wamid, /^wamid\./);
      const phone = await (await fetch(`${c.p.sandbox.url}/sandbox/phone`)).text();
      assert.ok(phone.includes('Is my order ready?') && phone.includes('Yes!'));
      assert.ok(!/<script/i.test(phone));
      await c.t.services.partner.withCloudApi(c.portalId, 'template', (cloud) =>
        cloud.createTemplate(c.wabaId, {
          name: 'order_ready',
          language: 'en_US',
          category: 'UTILITY',
          components: [{ type: 'BODY', text: 'Order {{1}} is ready' }],
        }),
      );
      const review = await until('template review', () =>
        c.recorded.find((r) => r.kind === 'template'),
      );
      assert.ok(review.kind === 'template');
      assert.deepEqual(
        [review.portalId, review.event.name, review.event.status, review.event.wabaId],
        [c.portalId, 'order_ready', 'APPROVED', c.wabaId],
      );
    });

    test('a dead token met by a Cloud API call revokes the connection (actor provider-client)', async (t) => {
      const c = await connected(t, backend);
      c.p.sandbox.revokeTokens(c.p.appId, '100066666');
      await assert.rejects(
        c.t.services.partner.withCloudApi(c.portalId, 'numbers', (cloud) =>
          cloud.listPhoneNumbers(c.wabaId),
        ),
        (err) => err instanceof ProviderError && err.kind === 'dead_token',
      );
      assert.equal((await c.t.services.partner.connectionSummary(c.portalId)).status, 'inactive');
      const events = await listAuditEvents(c.t.services.storage.db, c.portalId, { limit: 10 });
      const revoked = events.find((e) => e.action === 'connection.revoked');
      assert.equal(revoked?.actorId, 'provider-client');
      assert.match(revoked?.reason ?? '', /error 190\) during numbers/);
      assert.deepEqual(await c.t.services.partner.wabaIdsOf(c.portalId), []);
    });
  });
}
