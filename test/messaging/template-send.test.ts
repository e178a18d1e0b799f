/**
 * Template sends with all their components, on both backends, against the sandbox over real
 * HTTP: parameters that do not fit the template's definition are refused with 422
 * `invalid_template_parameters` before anything is reserved or queued; an image header and a
 * URL button's suffix reach the provider as the Cloud API's components (recorded by a proxy
 * between the app and the sandbox).
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { sql } from 'drizzle-orm';
import { graphProxy } from '../helpers/graph-proxy.ts';
import { eventually } from '../helpers/instances.ts';
import { messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends, type Backend } from '../helpers/storage.ts';

/** A proxy to the sandbox that keeps the JSON body of every `POST …/messages`. */
function recordingProxy(t: TestContext, sent: unknown[]) {
  return graphProxy(t, (req, body) => {
    if (req.method === 'POST' && /\/messages$/.test(req.url ?? ''))
      sent.push(JSON.parse(body.toString('utf8')));
    return false;
  });
}

const TO = '+16505551234';

/** Messages, reservations and messages due for delivery the portal has: all zero after a refusal. */
async function written(s: MessagingSetup) {
  const count = async (query: ReturnType<typeof sql>) =>
    Number((await queryRows<{ n: unknown }>(s.services.storage, query))[0]!.n);
  return {
    messages: await count(sql`select count(*) as n from messages where portal_id = ${s.portalId}`),
    reserves: await count(
      sql`select count(*) as n from credit_transactions where portal_id = ${s.portalId} and kind = 'reserve'`,
    ),
    due: await count(
      sql`select count(*) as n from messages where portal_id = ${s.portalId} and delivery_due_at is not null`,
    ),
  };
}

const template = (from: string, t: Record<string, unknown>) => ({
  to: TO,
  from,
  type: 'template',
  template: { language: 'en_US', ...t },
});

const picture = (mediaRef: Record<string, string>, suffix = 'ABC123') => ({
  name: 'order_picture',
  parameters: ['Ada'],
  components: [
    { type: 'header', parameters: [{ type: 'image', image: mediaRef }] },
    { type: 'button', subType: 'url', index: 0, parameters: [{ type: 'text', text: suffix }] },
  ],
});

async function setup(t: TestContext, backend: Backend, sent: unknown[] = []) {
  return messagingSetup(t, backend, {
    credit: 100,
    cloud: { sampleTemplates: true },
    graphBaseUrl: await recordingProxy(t, sent),
  });
}

for (const backend of backends()) {
  describe(`messaging: template components (${backend.name})`, () => {
    test('a missing image header: 422 naming the header, nothing reserved or queued', async (t) => {
      const s = await setup(t, backend);
      const from = s.numbers[0]!;
      const before = await written(s);
      const noHeader = await s.send(
        template(from, {
          name: 'order_picture',
          parameters: ['Ada'],
          components: [
            { type: 'button', subType: 'url', index: 0, parameters: [{ type: 'text', text: 'X' }] },
          ],
        }),
      );
      assert.equal(noHeader.statusCode, 422, noHeader.body);
      const error = noHeader.json().error;
      assert.equal(error.code, 'invalid_template_parameters');
      assert.match(error.message, /header \(IMAGE\) needs a header component with one image/);
      assert.deepEqual(error.details, [
        {
          field: 'body.template.components',
          message:
            "the template's header (IMAGE) needs a header component with one image parameter",
        },
      ]);

      const wrongKind = await s.send(
        template(from, {
          ...picture({ link: 'https://example.com/a.jpg' }),
          components: [
            { type: 'header', parameters: [{ type: 'text', text: 'Hi' }] },
            picture({}).components[1],
          ],
        }),
      );
      assert.equal(wrongKind.statusCode, 422);
      assert.match(
        wrongKind.json().error.message,
        /components\[0\] \(header\): expects one image parameter/,
      );
      assert.equal(
        wrongKind.json().error.details[0].field,
        'body.template.components[0].parameters[0]',
      );

      const noSuffix = await s.send(
        template(from, {
          ...picture({ link: 'https://example.com/a.jpg' }),
          components: [picture({ link: 'https://example.com/a.jpg' }).components[0]],
        }),
      );
      assert.equal(noSuffix.statusCode, 422);
      assert.match(
        noSuffix.json().error.message,
        /button 0 needs a button component \(subType url, index 0\)/,
      );

      const unknownMedium = await s.send(template(from, picture({ mediaId: 'med_unknown1' })));
      assert.equal(unknownMedium.statusCode, 422);
      assert.deepEqual(unknownMedium.json().error.details, [
        {
          field: 'body.template.components[0].parameters[0].image.mediaId',
          message: 'is not a medium of this account that can be sent (unknown or expired)',
        },
      ]);

      const both = await s.send(
        template(from, picture({ mediaId: 'med_x1', link: 'https://example.com/a.jpg' })),
      );
      assert.equal(both.statusCode, 422);
      assert.match(both.json().error.details[0].message, /exactly one of mediaId and link/);

      assert.deepEqual(await written(s), before, 'no message, reservation or job');
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 100,
        reserved: 0,
        currency: 'EUR',
      });
    });

    test('body counts: a variable missing, one too many, and parameters beside a body component', async (t) => {
      const s = await setup(t, backend);
      const from = s.numbers[0]!;
      // `greeting` is "Hello {{1}}, …": sent without its variable it would fail at the provider
      // with 132000 after the credit was reserved.
      const missing = await s.send(template(from, { name: 'greeting' }));
      assert.equal(missing.statusCode, 422, missing.body);
      assert.equal(missing.json().error.code, 'invalid_template_parameters');
      assert.match(missing.json().error.message, /expects 1 body parameter .*got 0/);
      assert.equal(missing.json().error.details[0].field, 'body.template.parameters');

      const extra = await s.send(template(from, { name: 'hello_world', parameters: ['Ada'] }));
      assert.equal(extra.statusCode, 422);
      assert.match(extra.json().error.message, /expects 0 body parameters .*got 1/);

      const component = await s.send(
        template(from, {
          name: 'greeting',
          components: [
            {
              type: 'body',
              parameters: [
                { type: 'text', text: 'Ada' },
                { type: 'text', text: 'Bob' },
              ],
            },
          ],
        }),
      );
      assert.equal(component.statusCode, 422);
      assert.match(
        component.json().error.message,
        /components\[0\] \(body\): expects 1 parameter .*got 2/,
      );

      const exclusive = await s.send(
        template(from, {
          name: 'greeting',
          parameters: ['Ada'],
          components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }] }],
        }),
      );
      assert.equal(exclusive.statusCode, 422);
      assert.match(exclusive.json().error.message, /exclusive/);

      const headerOnHello = await s.send(
        template(from, {
          name: 'hello_world',
          components: [{ type: 'header', parameters: [{ type: 'text', text: 'Hi' }] }],
        }),
      );
      assert.equal(headerOnHello.statusCode, 422);
      assert.match(headerOnHello.json().error.message, /header has no variable/);

      assert.deepEqual(await written(s), { messages: 0, reserves: 0, due: 0 });
    });

    test('an image header and a URL suffix: accepted, kept, sent as the Cloud API components', async (t) => {
      const sent: unknown[] = [];
      const s = await setup(t, backend, sent);
      const body = picture({ link: 'https://example.com/parcel.jpg' });
      const key = { 'idempotency-key': 'rich-template-1' };
      const res = await s.send(template(s.numbers[0]!, body), key);
      assert.equal(res.statusCode, 202, res.body);
      const queued = res.json().data;
      assert.deepEqual(queued.template, { language: 'en_US', ...body });
      // The replay reads the components back from the sealed content; the key's stored
      // response holds none of them in clear.
      const replay = await s.send(template(s.numbers[0]!, body), key);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.json().data.template, queued.template);
      const stored = await queryRows<{ body: string }>(
        s.services.storage,
        sql`select response_body::text as body from idempotency_keys where portal_id = ${s.portalId}`,
      );
      assert.equal(stored.length, 1);
      assert.doesNotMatch(stored[0]!.body, /ABC123|parcel\.jpg|Ada/);
      await eventually(async () => (await s.message(queued.id)).status === 'read', 'read');
      assert.deepEqual((await s.message(queued.id)).template, { language: 'en_US', ...body });
      const templates = sent.filter((b) => (b as { type?: string }).type === 'template');
      assert.equal(templates.length, 1);
      assert.deepEqual((templates[0] as { template: unknown }).template, {
        name: 'order_picture',
        language: { code: 'en_US' },
        components: [
          { type: 'body', parameters: [{ type: 'text', text: 'Ada' }] },
          {
            type: 'header',
            parameters: [{ type: 'image', image: { link: 'https://example.com/parcel.jpg' } }],
          },
          {
            type: 'button',
            sub_type: 'url',
            index: '0',
            parameters: [{ type: 'text', text: 'ABC123' }],
          },
        ],
      });
      const received = s.provider.sandbox.cloud.messages.find((m) => m.template);
      assert.deepEqual(received?.template?.params, ['Ada']);
    });

    test('a document header with currency and date_time body parameters, in snake_case', async (t) => {
      const sent: unknown[] = [];
      const s = await setup(t, backend, sent);
      for (const wabaId of await s.services.partner.wabaIdsOf(s.portalId))
        s.provider.sandbox.cloud.templatesOf(wabaId).push({
          id: `${wabaId}8`,
          name: 'payment_due',
          language: 'en_US',
          category: 'UTILITY',
          status: 'APPROVED',
          components: [
            { type: 'HEADER', format: 'DOCUMENT' },
            { type: 'BODY', text: '{{1}} is due on {{2}}.' },
            {
              type: 'BUTTONS',
              buttons: [
                { type: 'QUICK_REPLY', text: 'Paid' },
                { type: 'COPY_CODE', example: 'SAVE10' },
              ],
            },
          ],
          appId: undefined,
        });
      const res = await s.send(
        template(s.numbers[0]!, {
          name: 'payment_due',
          components: [
            {
              type: 'header',
              parameters: [
                {
                  type: 'document',
                  document: { link: 'https://example.com/i.pdf', filename: 'invoice.pdf' },
                },
              ],
            },
            {
              type: 'body',
              parameters: [
                {
                  type: 'currency',
                  currency: { fallbackValue: '€12.50', code: 'EUR', amount1000: 12500 },
                },
                { type: 'date_time', dateTime: { fallbackValue: '1 March' } },
              ],
            },
            {
              type: 'button',
              subType: 'copy_code',
              index: 1,
              parameters: [{ type: 'coupon_code', couponCode: 'SAVE10' }],
            },
          ],
        }),
      );
      assert.equal(res.statusCode, 202, res.body);
      await eventually(
        () => sent.some((b) => (b as { type?: string }).type === 'template'),
        'sent',
      );
      const wire = (
        sent.find((b) => (b as { type?: string }).type === 'template') as {
          template: { components: unknown[] };
        }
      ).template.components;
      assert.deepEqual(wire, [
        {
          type: 'header',
          parameters: [
            {
              type: 'document',
              document: { link: 'https://example.com/i.pdf', filename: 'invoice.pdf' },
            },
          ],
        },
        {
          type: 'body',
          parameters: [
            {
              type: 'currency',
              currency: { fallback_value: '€12.50', code: 'EUR', amount_1000: 12500 },
            },
            { type: 'date_time', date_time: { fallback_value: '1 March' } },
          ],
        },
        {
          type: 'button',
          sub_type: 'copy_code',
          index: '1',
          parameters: [{ type: 'coupon_code', coupon_code: 'SAVE10' }],
        },
      ]);

      // The copy code is required; a quick reply's payload under the wrong subType is named.
      const noCode = await s.send(
        template(s.numbers[0]!, {
          name: 'payment_due',
          components: [
            {
              type: 'header',
              parameters: [{ type: 'document', document: { link: 'https://example.com/i.pdf' } }],
            },
            {
              type: 'body',
              parameters: [
                { type: 'text', text: 'A' },
                { type: 'text', text: 'B' },
              ],
            },
            {
              type: 'button',
              subType: 'url',
              index: 0,
              parameters: [{ type: 'payload', payload: 'paid' }],
            },
          ],
        }),
      );
      assert.equal(noCode.statusCode, 422);
      assert.deepEqual(
        noCode.json().error.details.map((d: { message: string }) => d.message),
        [
          'components[2] (button 0, url): button 0 takes subType quick_reply',
          "the template's button 1 needs a button component (subType copy_code, index 1) with one coupon_code parameter",
        ],
      );
    });
  });
}
