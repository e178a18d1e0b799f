/**
 * `/messaging/numbers` and `/messaging/templates` over real storage and the sandbox provider
 * over real HTTP: the connected account's numbers, templates submitted, reviewed and deleted,
 * bad templates refused before any provider call, no connection → 409, revocation → 409.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { connectPortal, startTestProvider } from '../helpers/provider.ts';
import { backends } from '../helpers/storage.ts';
import { deadline } from '../helpers/deadlines.ts';

const API = '/api/v1/external/messaging';

function caller(app: FastifyInstance, token: string) {
  return (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    app.inject({
      method,
      url: `${API}${url}`,
      headers: { authorization: token },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
}

const ORDER_SHIPPED = {
  wabaId: '102000123401',
  name: 'order_shipped',
  language: 'en_US',
  category: 'UTILITY',
  components: [
    { type: 'HEADER', format: 'TEXT', text: 'Your order' },
    {
      type: 'BODY',
      text: 'Hello {{1}}, order {{2}} is on its way.',
      example: { body_text: [['Ada', 'A-1042']] },
    },
    { type: 'FOOTER', text: 'Reply STOP to opt out' },
  ],
};

const WABA1 = '102000123401';
const WABA2 = '102000123402';

/** Poll `read` until `ok` (every 200 ms, at most `deadline(20 s)`). */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const giveUp = Date.now() + deadline(20_000);
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > giveUp) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function connected(
  t: Parameters<typeof buildTestApp>[0],
  backend: Parameters<typeof buildTestApp>[1],
) {
  const provider = await startTestProvider(t, { cloud: { templateReviewMs: 1500 } });
  const built = await buildTestApp(t, backend, provider.env);
  const portal = await createPortal(built.services);
  await connectPortal(built.services, provider, {
    portalId: portal.portalId,
    userId: portal.userId,
    providerUserId: '100077001234',
  });
  return { ...built, provider, portal, call: caller(built.app, portal.token) };
}

for (const backend of backends()) {
  describe(`messaging numbers and templates (${backend.name})`, () => {
    test('no connection: numbers and templates are 409 not_connected, nothing called', async (t) => {
      const provider = await startTestProvider(t);
      const { app, services } = await buildTestApp(t, backend, provider.env);
      const call = caller(app, (await createPortal(services)).token);
      for (const [method, url, body] of [
        ['GET', '/numbers'],
        ['GET', '/templates'],
        ['POST', '/templates', ORDER_SHIPPED],
        ['DELETE', '/templates/order_shipped'],
      ] as const) {
        const res = await call(method, url, body);
        assert.equal(res.statusCode, 409, `${method} ${url}`);
        assert.equal(res.json().error.code, 'not_connected');
        assert.match(res.json().error.message, /connect/);
      }
      assert.equal(provider.sandbox.calls.filter((c) => c.url.includes('/10')).length, 0);
    });

    test('numbers: every number of every WABA, in the documented shape', async (t) => {
      const { call } = await connected(t, backend);
      const res = await call('GET', '/numbers');
      assert.equal(res.statusCode, 200);
      const { items, nextCursor } = res.json().data;
      assert.equal(nextCursor, null);
      assert.equal(items.length, 4, 'two WABAs with two numbers each');
      assert.deepEqual(Object.keys(items[0]).sort(), [
        'displayPhoneNumber',
        'id',
        'messagingLimitPerDay',
        'messagingLimitTier',
        'onboarding',
        'qualityRating',
        'verifiedName',
        'wabaId',
      ]);
      assert.deepEqual(
        items.map((n: { wabaId: string }) => n.wabaId),
        [WABA1, WABA1, WABA2, WABA2],
      );
      assert.match(items[0].id, /^[0-9]+$/);
      assert.match(items[0].displayPhoneNumber, /^\+1 555/);
      assert.equal(items[0].qualityRating, 'GREEN');
      assert.equal(items[0].messagingLimitTier, 'TIER_2K');
      assert.equal(items[0].messagingLimitPerDay, 2000);
    });

    test('templates: submit → 201 PENDING → APPROVED after review; filters; delete', async (t) => {
      const { call } = await connected(t, backend);
      const created = await call('POST', '/templates', ORDER_SHIPPED);
      assert.equal(created.statusCode, 201, created.body);
      assert.deepEqual(
        { ...created.json().data, id: 0 },
        {
          id: 0,
          name: 'order_shipped',
          language: 'en_US',
          category: 'UTILITY',
          status: 'PENDING',
          wabaId: WABA1,
        },
      );
      // Two WABAs: which one must be said.
      const { wabaId: _omitted, ...unnamed } = ORDER_SHIPPED;
      const ambiguous = await call('POST', '/templates', { ...unnamed, name: 'other' });
      assert.equal(ambiguous.statusCode, 400);
      assert.equal(ambiguous.json().error.details[0].field, 'body.wabaId');
      const rejected = await call('POST', '/templates', {
        ...ORDER_SHIPPED,
        name: 'please_reject_me',
      });
      assert.equal(rejected.statusCode, 201);
      const again = await call('POST', '/templates', ORDER_SHIPPED);
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().error.code, 'conflict');

      const pending = await call('GET', '/templates?status=PENDING');
      assert.deepEqual(
        pending
          .json()
          .data.items.map((i: { name: string }) => i.name)
          .sort(),
        ['order_shipped', 'please_reject_me'],
      );
      const approved = await eventually(
        () => call('GET', '/templates?status=APPROVED'),
        (r) =>
          r
            .json<{ data: { items: { name: string }[] } }>()
            .data.items.some((i) => i.name === 'order_shipped'),
      );
      assert.deepEqual(
        // The sandbox's accounts come with an approved `hello_world` each.
        approved
          .json()
          .data.items.map((i: { name: string }) => i.name)
          .sort(),
        ['hello_world', 'hello_world', 'order_shipped'],
      );
      const byName = await eventually(
        () => call('GET', '/templates?name=reject'),
        (r) => r.json().data.items[0]?.status !== 'PENDING',
      );
      assert.equal(byName.json().data.items[0].status, 'REJECTED');
      assert.equal(byName.json().data.items[0].components.length, 3);

      const deleted = await call('DELETE', `/templates/order_shipped?wabaId=${WABA1}`);
      assert.equal(deleted.statusCode, 200);
      const left = (await call('GET', '/templates')).json().data.items;
      assert.ok(!left.some((i: { name: string }) => i.name === 'order_shipped'));
      assert.ok(left.some((i: { name: string }) => i.name === 'please_reject_me'));
      const gone = await call('DELETE', `/templates/order_shipped?wabaId=${WABA1}`);
      assert.equal(gone.statusCode, 404);
    });

    test('templates: cursor pages end with null and never repeat', async (t) => {
      const { call } = await connected(t, backend);
      for (let i = 0; i < 5; i++)
        assert.equal(
          (await call('POST', '/templates', { ...ORDER_SHIPPED, name: `t_${i}` })).statusCode,
          201,
        );
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await call('GET', `/templates?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(res.statusCode, 200);
        seen.push(...res.json().data.items.map((i: { name: string }) => i.name));
        cursor = res.json().data.nextCursor;
      } while (cursor);
      // WABA 1's templates in the provider's order, then WABA 2's; each once.
      assert.deepEqual(seen, ['hello_world', 't_0', 't_1', 't_2', 't_3', 't_4', 'hello_world']);
      const bad = await call('GET', '/templates?cursor=bm9wZQ');
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error.details[0].field, 'querystring.cursor');
    });

    test('bad templates are refused with details before any provider call', async (t) => {
      const { call, provider } = await connected(t, backend);
      const before = provider.sandbox.calls.length;
      const body = (components: unknown[], extra: object = {}) => ({
        ...ORDER_SHIPPED,
        components,
        ...extra,
      });
      const cases: [unknown, RegExp][] = [
        [{ ...ORDER_SHIPPED, name: 'Order Shipped' }, /name/],
        [{ ...ORDER_SHIPPED, category: 'PROMO' }, /category/],
        [body([{ type: 'FOOTER', text: 'x' }]), /exactly one BODY/],
        [
          body([
            { type: 'BODY', text: 'a' },
            { type: 'BODY', text: 'b' },
          ]),
          /exactly one BODY/,
        ],
        [body([{ type: 'BODY', text: 'x'.repeat(1025) }]), /1024/],
        [
          body([
            { type: 'BODY', text: 'Hi {{1}} and {{3}}', example: { body_text: [['a', 'b']] } },
          ]),
          /without a gap/,
        ],
        [body([{ type: 'BODY', text: 'Hi {{1}} {{2}}' }]), /example/],
        [
          body([{ type: 'BODY', text: 'Hi {{1}} {{2}}', example: { body_text: [['a']] } }]),
          /2 example values/,
        ],
        [
          body([
            { type: 'BODY', text: 'ok' },
            { type: 'HEADER', format: 'TEXT', text: '{{1}} {{2}}' },
          ]),
          /at most one variable/,
        ],
        [body([{ type: 'BODY', text: 'ok' }], { wabaId: '999' }), /WhatsApp Business Account/],
        [body([{ type: 'BODY', text: 'ok', colour: 'red' }]), /colour|additional/],
      ];
      for (const [payload, pattern] of cases) {
        const res = await call('POST', '/templates', payload);
        assert.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 120));
        assert.equal(res.json().error.code, 'invalid_request');
        assert.match(JSON.stringify(res.json().error), pattern, JSON.stringify(res.json().error));
      }
      const templateCalls = provider.sandbox.calls
        .slice(before)
        .filter((c) => c.url.includes('message_templates'));
      assert.equal(templateCalls.length, 0);
      assert.equal((await call('GET', '/numbers')).statusCode, 200, 'the server keeps serving');
    });

    test('revoked at the provider: the next call revokes the connection and answers 409', async (t) => {
      const { call, provider, services, portal } = await connected(t, backend);
      assert.equal((await call('GET', '/numbers')).statusCode, 200);
      provider.sandbox.revokeTokens(provider.appId, '100077001234');
      const res = await call('GET', '/templates');
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().error.code, 'not_connected');
      assert.equal((await services.partner.connectionSummary(portal.portalId)).status, 'inactive');
      // The cached numbers are not served to a revoked connection.
      assert.equal((await call('GET', '/numbers')).statusCode, 409);
    });
  });
}
