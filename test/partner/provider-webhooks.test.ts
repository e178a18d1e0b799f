/**
 * The provider webhook receiver (`/api/provider/webhooks`) over real storage: the subscription
 * check, the signature over the raw bytes, routing by WABA id through the active connection,
 * the typed events at the sink, PARTNER_REMOVED, duplicates; and the WABA lookups it rests on.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { listAuditEvents } from '../../src/audit/audit-log.ts';
import { PROVIDER_CLIENT_ACTOR } from '../../src/partner/revocation/revocation.ts';
import { buildTestApp, createPortal, type TestApp } from '../helpers/app.ts';
import { recordingSink, type Recorded } from '../helpers/webhook-sink.ts';
import { connectPortal, startTestProvider, type TestProvider } from '../helpers/provider.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends, type Backend } from '../helpers/storage.ts';

interface Setup {
  p: TestProvider;
  t: TestApp;
  recorded: Recorded[];
  portalId: number;
  wabaIds: string[];
}

async function setup(ctx: Parameters<typeof buildTestApp>[0], backend: Backend): Promise<Setup> {
  const p = await startTestProvider(ctx);
  const { sink, recorded } = recordingSink();
  const t = await buildTestApp(ctx, backend, p.env, { providerWebhookSink: sink });
  const portal = await createPortal(t.services);
  const portalId = await t.services.accounts.portalIdFor(portal.portalCode);
  const result = await connectPortal(t.services, p, {
    portalId,
    userId: portal.userId,
    providerUserId: '100055555',
  });
  assert.deepEqual(result, { ok: true });
  return { p, t, recorded, portalId, wabaIds: await t.services.partner.wabaIdsOf(portalId) };
}

function post(s: Setup, body: string, signature?: string) {
  return s.t.app.inject({
    method: 'POST',
    url: '/api/provider/webhooks',
    headers: {
      'content-type': 'application/json',
      ...(signature !== undefined && { 'x-hub-signature-256': signature }),
    },
    payload: body,
  });
}

const sign = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

function notification(wabaId: string, field: string, value: unknown, time?: number) {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [{ id: wabaId, ...(time !== undefined && { time }), changes: [{ field, value }] }],
  });
}

const STATUSES = (phoneNumberId: string) => ({
  messaging_product: 'whatsapp',
  metadata: { display_phone_number: '15550111234', phone_number_id: phoneNumberId },
  statuses: [
    {
      id: 'wamid.ABC',
      status: 'failed',
      timestamp: '1764000000',
      recipient_id: '16505550000',
      biz_opaque_callback_data: 'msg_42',
      errors: [{ code: 131026, title: 'quoted +16505550000 input', error_data: { details: 'x' } }],
      unknown_field: { kept: 'ignored' },
    },
    {
      id: 'wamid.DEF',
      status: 'delivered',
      timestamp: 1764000001,
      recipient_id: '1650555',
      // As documented: the conversation (its expiry on the first status only) and the pricing.
      conversation: {
        id: '6a1f0c2e9b7d4e3a8c5b2d1e0f9a8b7c',
        expiration_timestamp: '1764086400',
        origin: { type: 'utility' },
      },
      pricing: { billable: true, pricing_model: 'PMP', type: 'regular', category: 'utility' },
    },
    { id: 'wamid.BAD', status: 'exploded', timestamp: '1', recipient_id: '1' },
  ],
});

for (const backend of backends()) {
  describe(`provider webhooks (${backend.name})`, () => {
    test('WABA ids per permission at connect; portalOfWaba routes through the active connection only', async (t) => {
      const s = await setup(t, backend);
      assert.equal(s.wabaIds.length, 2);
      assert.equal(await s.t.services.partner.portalOfWaba(s.wabaIds[1]!), s.portalId);
      assert.equal(await s.t.services.partner.portalOfWaba('999999'), null);
      assert.equal(await s.t.services.partner.portalOfWaba('not digits'), null);
      const [row] = await queryRows<{ granted_assets: Record<string, string[]> }>(
        s.t.services.storage,
        sql`select granted_assets from connections where portal_id = ${s.portalId}`,
      );
      assert.deepEqual(row!.granted_assets.whatsapp_business_messaging, s.wabaIds);
      assert.deepEqual(Object.keys(row!.granted_assets).sort(), [
        'business_management',
        'whatsapp_business_management',
        'whatsapp_business_messaging',
      ]);
      await s.t.services.partner.revokeConnection(s.portalId, {
        actor: PROVIDER_CLIENT_ACTOR,
        reason: 'dead_token',
      });
      assert.deepEqual(await s.t.services.partner.wabaIdsOf(s.portalId), []);
      assert.equal(await s.t.services.partner.portalOfWaba(s.wabaIds[0]!), null);
    });

    test('subscription verification: the challenge for the verify token, 403 otherwise', async (t) => {
      const s = await setup(t, backend);
      const verify = (query: string) =>
        s.t.app.inject({ method: 'GET', url: `/api/provider/webhooks?${query}` });
      const ok = await verify(
        `hub.mode=subscribe&hub.verify_token=${s.p.webhookVerifyToken}&hub.challenge=1158201444`,
      );
      assert.equal(ok.statusCode, 200);
      assert.equal(ok.body, '1158201444');
      assert.match(String(ok.headers['content-type']), /^text\/plain/);
      for (const bad of [
        `hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1`,
        `hub.mode=unsubscribe&hub.verify_token=${s.p.webhookVerifyToken}&hub.challenge=1`,
        `hub.mode=subscribe&hub.challenge=1`,
        `hub.mode=subscribe&hub.verify_token=${s.p.webhookVerifyToken}`,
      ]) {
        const res = await verify(bad);
        assert.equal(res.statusCode, 403, bad);
        assert.ok(!res.body.includes(s.p.webhookVerifyToken));
      }
    });

    test('signed statuses reach the sink, typed; bad, missing or replayed-over-other-bytes signatures → 401, nothing dispatched', async (t) => {
      const s = await setup(t, backend);
      const number = `${s.wabaIds[0]}1`;
      const body = notification(s.wabaIds[0]!, 'messages', STATUSES(number));
      for (const signature of [undefined, 'sha256=00', sign('another-secret', body), 'sha1=abc']) {
        const res = await post(s, body, signature);
        assert.equal(res.statusCode, 401, String(signature));
        assert.equal(res.json().error.code, 'invalid_signature');
      }
      // A valid signature of other bytes (a space added) does not verify either.
      assert.equal((await post(s, `${body} `, sign(s.p.appSecret, body))).statusCode, 401);
      assert.equal(s.recorded.length, 0);
      const res = await post(s, body, sign(s.p.appSecret, body));
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { success: true });
      assert.equal(s.recorded.length, 1);
      const got = s.recorded[0]!;
      assert.equal(got.kind, 'statuses');
      if (got.kind !== 'statuses') return;
      assert.equal(got.portalId, s.portalId);
      assert.equal(got.phoneNumberId, number);
      assert.deepEqual(got.events, [
        {
          wamid: 'wamid.ABC',
          status: 'failed',
          timestamp: new Date(1764000000 * 1000),
          recipientId: '16505550000',
          bizOpaqueCallbackData: 'msg_42',
          // Our title for 131026, never the provider's (it may quote input).
          errors: [{ code: 131026, title: 'Message undeliverable' }],
        },
        {
          wamid: 'wamid.DEF',
          status: 'delivered',
          timestamp: new Date(1764000001 * 1000),
          recipientId: '1650555',
          pricing: { billable: true, category: 'utility', pricingModel: 'PMP', type: 'regular' },
          errors: [],
        },
      ]);
      // A duplicate delivery is dispatched again: the sink is idempotent by contract.
      assert.equal((await post(s, body, sign(s.p.appSecret, body))).statusCode, 200);
      assert.equal(s.recorded.length, 2);
      for (const line of s.t.logs) assert.ok(!line.includes('16505550000'), line);
    });

    test('inbound messages with the profile name; template status updates; unknown WABA → 200 ignored; not JSON → 400', async (t) => {
      const s = await setup(t, backend);
      const number = `${s.wabaIds[1]}2`;
      const inbound = notification(s.wabaIds[1]!, 'messages', {
        messaging_product: 'whatsapp',
        metadata: { display_phone_number: '15550121234', phone_number_id: number },
        contacts: [{ profile: { name: 'Ada' }, wa_id: '16505551234' }],
        messages: [
          {
            from: '16505551234',
            id: 'wamid.IN',
            timestamp: '1764000100',
            type: 'text',
            text: { body: 'a secret reply' },
          },
        ],
      });
      assert.equal((await post(s, inbound, sign(s.p.appSecret, inbound))).statusCode, 200);
      const template = notification(s.wabaIds[0]!, 'message_template_status_update', {
        event: 'REJECTED',
        message_template_id: 123456789012345,
        message_template_name: 'promo',
        message_template_language: 'en_US',
        reason: 'INVALID_FORMAT',
      });
      assert.equal((await post(s, template, sign(s.p.appSecret, template))).statusCode, 200);
      assert.deepEqual(s.recorded, [
        {
          kind: 'inbound',
          portalId: s.portalId,
          phoneNumberId: number,
          events: [
            {
              wamid: 'wamid.IN',
              from: '16505551234',
              timestamp: new Date(1764000100 * 1000),
              type: 'text',
              content: { type: 'text', text: { body: 'a secret reply' } },
              profileName: 'Ada',
            },
          ],
        },
        {
          kind: 'template',
          portalId: s.portalId,
          event: {
            wabaId: s.wabaIds[0],
            templateId: '123456789012345',
            name: 'promo',
            language: 'en_US',
            status: 'REJECTED',
            reason: 'INVALID_FORMAT',
          },
        },
      ]);
      const stranger = notification('102000000001', 'messages', STATUSES('1020000000011'));
      assert.equal((await post(s, stranger, sign(s.p.appSecret, stranger))).statusCode, 200);
      assert.equal(s.recorded.length, 2, 'an unknown WABA is acknowledged and ignored');
      const garbage = '{"object":';
      assert.equal((await post(s, garbage, sign(s.p.appSecret, garbage))).statusCode, 400);
      const other = '{"object":"page","entry":[]}';
      assert.equal((await post(s, other, sign(s.p.appSecret, other))).statusCode, 400);
      const form = await s.t.app.inject({
        method: 'POST',
        url: '/api/provider/webhooks',
        headers: { 'content-type': 'text/plain' },
        payload: 'x',
      });
      assert.equal(form.statusCode, 415);
      assert.equal(s.recorded.length, 2);
      for (const line of s.t.logs) assert.ok(!line.includes('a secret reply'), line);
      // Still serving.
      assert.equal((await post(s, template, sign(s.p.appSecret, template))).statusCode, 200);
    });

    test("a body over the receiver's 8 MiB limit is 413 stating that limit", async (t) => {
      const s = await setup(t, backend);
      const body = notification(s.wabaIds[0]!, 'messages', { pad: 'x'.repeat(8 * 1024 * 1024) });
      const res = await post(s, body, sign(s.p.appSecret, body));
      assert.equal(res.statusCode, 413);
      assert.equal(res.json().error.code, 'payload_too_large');
      assert.match(res.json().error.message, /8 MiB/);
      assert.equal(s.recorded.length, 0);
    });

    test('account_update PARTNER_REMOVED revokes (actor provider, audited once); a duplicate changes nothing; one sent before a reconnection is ignored', async (t) => {
      const s = await setup(t, backend);
      const at = Math.floor(Date.now() / 1000) + 5;
      const removed = notification(
        s.wabaIds[0]!,
        'account_update',
        { event: 'PARTNER_REMOVED', waba_info: { waba_id: s.wabaIds[0], owner_business_id: '1' } },
        at,
      );
      assert.equal((await post(s, removed, sign(s.p.appSecret, removed))).statusCode, 200);
      assert.equal((await s.t.services.partner.connectionSummary(s.portalId)).status, 'inactive');
      assert.equal((await post(s, removed, sign(s.p.appSecret, removed))).statusCode, 200);
      const revocations = (
        await listAuditEvents(s.t.services.storage.db, s.portalId, { limit: 50 })
      ).filter((e) => e.action === 'connection.revoked');
      assert.equal(revocations.length, 1);
      assert.equal(revocations[0]!.actorType, 'provider');
      assert.equal(revocations[0]!.actorId, `waba:${s.wabaIds[0]}`);
      assert.match(revocations[0]!.reason ?? '', /removed Portico from its WhatsApp Business/);
      // Connected again: an old removal (signed before this connection) leaves it alone.
      const again = await connectPortal(s.t.services, s.p, {
        portalId: s.portalId,
        userId: await firstUser(s),
        providerUserId: '100055555',
      });
      assert.deepEqual(again, { ok: true });
      const old = notification(
        s.wabaIds[0]!,
        'account_update',
        { event: 'PARTNER_REMOVED' },
        Math.floor(Date.now() / 1000) - 3600,
      );
      assert.equal((await post(s, old, sign(s.p.appSecret, old))).statusCode, 200);
      assert.equal((await s.t.services.partner.connectionSummary(s.portalId)).status, 'active');
    });
  });
}

/** The user who connected the portal (its main administrator). */
async function firstUser(s: Setup): Promise<number> {
  const [row] = await queryRows<{ id: number }>(
    s.t.services.storage,
    sql`select id from users where portal_id = ${s.portalId} order by id limit 1`,
  );
  return row!.id;
}
