/**
 * `/messaging/drafts` over real storage: create, read, list (cursor pages), patch, delete,
 * validation, tenant isolation; sending refused without a connection, without recipients and
 * (on this branch) without the messaging send service.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { connectPortal, startTestProvider } from '../helpers/provider.ts';
import { backends } from '../helpers/storage.ts';

const DRAFTS = '/api/v1/external/messaging/drafts';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function caller(app: FastifyInstance, token: string) {
  return (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    app.inject({
      method,
      url,
      headers: { authorization: token },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
}

const TEMPLATE_DRAFT = {
  type: 'template',
  template: { name: 'order_shipped', language: 'en_US', parameters: ['Ada', 'A-1042'] },
  recipients: { phones: ['+1 650-555-1234', '0044 20 7946 0958', '+16505551234'], tag: 'vip' },
};

for (const backend of backends()) {
  describe(`/messaging/drafts (${backend.name})`, () => {
    test('create, read, patch, delete: the documented shape; phones in E.164, once each', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const call = caller(app, (await createPortal(services)).token);
      const created = await call('POST', DRAFTS, TEMPLATE_DRAFT);
      assert.equal(created.statusCode, 201, created.body);
      const draft = created.json().data;
      assert.match(draft.id, /^drf_[0-9A-Za-z]+$/);
      assert.match(draft.createdAt, ISO);
      assert.deepEqual(
        { ...draft, id: 0, createdAt: 0, updatedAt: 0 },
        {
          id: 0,
          type: 'template',
          template: { name: 'order_shipped', language: 'en_US', parameters: ['Ada', 'A-1042'] },
          recipients: { contactIds: [], phones: ['+16505551234', '+442079460958'], tag: 'vip' },
          from: null,
          sentAt: null,
          sendResult: null,
          createdAt: 0,
          updatedAt: 0,
        },
      );
      assert.deepEqual((await call('GET', `${DRAFTS}/${draft.id}`)).json().data, draft);

      const toText = await call('PATCH', `${DRAFTS}/${draft.id}`, {
        type: 'text',
        text: { body: 'Your order shipped.' },
        from: '1000123001',
      });
      assert.equal(toText.statusCode, 200, toText.body);
      assert.equal(toText.json().data.type, 'text');
      assert.equal(toText.json().data.template, undefined, 'changing type drops the template');
      assert.equal(toText.json().data.from, '1000123001');
      assert.deepEqual(toText.json().data.recipients, draft.recipients, 'recipients kept');
      const cleared = await call('PATCH', `${DRAFTS}/${draft.id}`, {
        from: null,
        recipients: { contactIds: ['ctc_abc'] },
      });
      assert.equal(cleared.json().data.from, null);
      assert.deepEqual(cleared.json().data.recipients, {
        contactIds: ['ctc_abc'],
        phones: [],
        tag: null,
      });
      const mixed = await call('PATCH', `${DRAFTS}/${draft.id}`, {
        template: { name: 'x', language: 'en' },
      });
      assert.equal(mixed.statusCode, 400, 'a template on a text draft is refused');
      assert.equal(
        (await call('GET', `${DRAFTS}/${draft.id}`)).json().data.text.body,
        'Your order shipped.',
      );

      assert.equal((await call('DELETE', `${DRAFTS}/${draft.id}`)).statusCode, 200);
      assert.equal((await call('GET', `${DRAFTS}/${draft.id}`)).statusCode, 404);
      assert.equal((await call('DELETE', `${DRAFTS}/${draft.id}`)).statusCode, 404);
    });

    test('bad drafts are 400 with details and store nothing', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const call = caller(app, (await createPortal(services)).token);
      const cases: [unknown, RegExp][] = [
        [{ type: 'text' }, /body\.text/],
        [{ type: 'text', text: { body: '' } }, /text/],
        [{ type: 'text', text: { body: 'x'.repeat(4097) } }, /4096/],
        [{ type: 'template', text: { body: 'hi' } }, /body\.template/],
        [{ type: 'sms', text: { body: 'hi' } }, /type/],
        [
          { type: 'text', text: { body: 'hi' }, recipients: { phones: ['650 555 1234'] } },
          /phones\[0\]/,
        ],
        [
          { type: 'text', text: { body: 'hi' }, recipients: { contactIds: ['nope'] } },
          /contactIds/,
        ],
        [{ type: 'text', text: { body: 'hi' }, from: '+1555' }, /from/],
        [{ type: 'text', text: { body: 'hi' }, extra: 1 }, /extra|additional/],
      ];
      for (const [payload, pattern] of cases) {
        const res = await call('POST', DRAFTS, payload);
        assert.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 100));
        assert.equal(res.json().error.code, 'invalid_request');
        assert.match(JSON.stringify(res.json().error), pattern);
      }
      assert.deepEqual((await call('GET', DRAFTS)).json().data.items, []);
    });

    test('list: newest first, cursor pages without repeats, sent filter; other portals see nothing', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const call = caller(app, (await createPortal(services)).token);
      const other = caller(app, (await createPortal(services)).token);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push(
          (await call('POST', DRAFTS, { type: 'text', text: { body: `m${i}` } })).json().data.id,
        );
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await call('GET', `${DRAFTS}?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(res.statusCode, 200);
        seen.push(...res.json().data.items.map((d: { id: string }) => d.id));
        cursor = res.json().data.nextCursor;
      } while (cursor);
      assert.deepEqual(seen, [...ids].reverse());
      assert.equal((await call('GET', `${DRAFTS}?sent=true`)).json().data.items.length, 0);
      assert.equal((await call('GET', `${DRAFTS}?sent=false`)).json().data.items.length, 5);
      assert.equal((await call('GET', `${DRAFTS}?cursor=xyz`)).statusCode, 400);
      assert.deepEqual((await other('GET', DRAFTS)).json().data.items, []);
      for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
        const res = await other(
          method,
          `${DRAFTS}/${ids[0]}`,
          method === 'PATCH' ? { from: null } : undefined,
        );
        assert.equal(res.statusCode, 404, method);
      }
      assert.equal((await other('POST', `${DRAFTS}/${ids[0]}/send`)).statusCode, 404);
      assert.equal((await call('GET', `${DRAFTS}/${ids[0]}`)).statusCode, 200);
    });

    test('send: refused while it cannot send; the draft stays unsent', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const call = caller(app, (await createPortal(services)).token);
      const draft = (await call('POST', DRAFTS, TEMPLATE_DRAFT)).json().data;
      const res = await call('POST', `${DRAFTS}/${draft.id}/send`);
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(res.json().error.code, 'not_connected');
      assert.equal((await call('GET', `${DRAFTS}/${draft.id}`)).json().data.sentAt, null);
    });

    test('send through the send service: one queued per recipient, refusals named, sent once', async (t) => {
      const provider = await startTestProvider(t);
      const { app, services, logs } = await buildTestApp(t, backend, provider.env);
      const portal = await createPortal(services);
      await connectPortal(services, provider, { portalId: portal.portalId, userId: portal.userId });
      await services.messaging.start(); // the delivery queue (no workers: messages stay queued)
      await services.messaging.addCredit({
        portalId: portal.portalId,
        amount: 100,
        note: 't',
        actor: CLI_ACTOR,
      });
      const call = caller(app, portal.token);
      const numbers = (await call('GET', '/api/v1/external/messaging/numbers')).json().data.items;
      const opted = (
        await call('POST', '/api/v1/external/crm/contacts', {
          phone: '+16505550009',
          consent: { whatsapp: 'opted_out' },
        })
      ).json().data.id;
      const draft = (
        await call('POST', DRAFTS, {
          type: 'template',
          template: { name: 'hello_world', language: 'en_US', parameters: [] },
          from: numbers[0].id,
          recipients: { contactIds: [opted], phones: ['+16505550001', '+16505550002'] },
        })
      ).json().data;
      const sent = await call('POST', `${DRAFTS}/${draft.id}/send`);
      assert.equal(
        sent.statusCode,
        200,
        logs
          .filter((l) => l.includes('"level":50'))
          .join('\n')
          .slice(0, 1500),
      );
      assert.equal(sent.json().data.queued, 2);
      assert.deepEqual(
        sent
          .json()
          .data.refused.map((r: { recipient: string; code: string }) => [r.recipient, r.code]),
        [[opted, 'recipient_opted_out']],
      );
      const messages = (await call('GET', '/api/v1/external/messaging/messages')).json().data.items;
      assert.deepEqual(messages.map((m: { to: string }) => m.to).sort(), [
        '+16505550001',
        '+16505550002',
      ]);
      assert.equal((await call('POST', `${DRAFTS}/${draft.id}/send`)).statusCode, 409);
      assert.deepEqual((await call('GET', `${DRAFTS}/${draft.id}`)).json().data.sendResult, {
        queued: 2,
        refused: 1,
      });
    });
  });
}
