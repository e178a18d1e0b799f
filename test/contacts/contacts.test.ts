import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

const CONTACTS = '/api/v1/external/crm/contacts';
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function caller(app: FastifyInstance, token: string) {
  return (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    app.inject({
      method,
      url,
      headers: { authorization: token },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
}

for (const backend of backends()) {
  describe(`/crm/contacts (${backend.name})`, () => {
    test('create, read: the contact as documented, phone in E.164', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const call = caller(app, (await createPortal(services)).token);
      const created = await call('POST', CONTACTS, {
        phone: '+1 650-555-1234',
        email: 'ada@example.test',
        firstName: 'Ada',
        lastName: 'Lovelace',
        attributes: { plan: 'pro', seats: 3, trial: false },
        tags: ['vip', 'beta'],
        consent: { whatsapp: 'opted_in' },
      });
      assert.equal(created.statusCode, 201);
      const contact = created.json().data;
      assert.match(contact.id, /^ctc_[0-9A-Za-z]+$/);
      assert.deepEqual(
        {
          ...contact,
          id: 0,
          createdAt: 0,
          updatedAt: 0,
          consent: { ...contact.consent, updatedAt: 0 },
        },
        {
          id: 0,
          phone: '+16505551234',
          waUserId: null,
          parentWaUserId: null,
          username: null,
          profileName: null,
          email: 'ada@example.test',
          firstName: 'Ada',
          lastName: 'Lovelace',
          attributes: { plan: 'pro', seats: 3, trial: false },
          tags: ['vip', 'beta'],
          consent: { whatsapp: 'opted_in', updatedAt: 0, source: 'api' },
          lastInboundAt: null,
          createdAt: 0,
          updatedAt: 0,
        },
      );
      assert.match(contact.createdAt, ISO_UTC);
      const minimal = await call('POST', CONTACTS, { phone: '0044 20 7946 0958' });
      assert.equal(minimal.statusCode, 201);
      assert.equal(minimal.json().data.phone, '+442079460958');
      assert.equal(minimal.json().data.consent.whatsapp, 'unknown');
      assert.deepEqual(minimal.json().data.attributes, {});

      const one = await call('GET', `${CONTACTS}/${contact.id}`);
      // Read alone, a contact carries its consent history: here its consent at creation.
      assert.deepEqual(one.json(), {
        success: true,
        data: {
          ...contact,
          consentHistory: [
            {
              from: 'unknown',
              to: 'opted_in',
              source: 'api',
              scope: 'whatsapp',
              phoneNumberId: null,
              messageId: null,
              at: contact.consent.updatedAt,
            },
          ],
        },
      });
    });

    test('a phone the portal has is 409 conflict naming the existing id; another portal may have it', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const a = caller(app, (await createPortal(services)).token);
      const b = caller(app, (await createPortal(services)).token);
      const first = await a('POST', CONTACTS, { phone: '+16505551234' });
      const again = await a('POST', CONTACTS, { phone: '(+1) 650 555 1234', firstName: 'X' });
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().error.code, 'conflict');
      assert.deepEqual(again.json().error.details, [
        {
          field: 'body.phone',
          message: 'is already the phone of another contact',
          id: first.json().data.id,
        },
      ]);
      assert.equal((await b('POST', CONTACTS, { phone: '+16505551234' })).statusCode, 201);
      const list = await a('GET', CONTACTS);
      assert.equal(list.json().data.items.length, 1, 'nothing written by the refused create');
    });

    test('PUT by-phone upserts: 201 then 200, given fields set, others kept', async (t) => {
      const { app, services, logs } = await buildTestApp(t, backend);
      const call = caller(app, (await createPortal(services)).token);
      const url = `${CONTACTS}/by-phone/${encodeURIComponent('+44 20 7946 0958')}`;
      const created = await call('PUT', url, { firstName: 'Bob', tags: ['a'] });
      assert.equal(created.statusCode, 201);
      const updated = await call(
        'PUT',
        `${CONTACTS}/by-phone/${encodeURIComponent('+442079460958')}`,
        {
          lastName: 'Builder',
          consent: { whatsapp: 'opted_out' },
        },
      );
      assert.equal(updated.statusCode, 200);
      const c = updated.json().data;
      assert.equal(c.id, created.json().data.id);
      assert.deepEqual([c.firstName, c.lastName, c.tags], ['Bob', 'Builder', ['a']]);
      assert.equal(c.consent.whatsapp, 'opted_out');
      assert.ok(
        c.consent.updatedAt > created.json().data.consent.updatedAt ||
          c.consent.updatedAt === c.updatedAt,
      );
      const bad = await call(
        'PUT',
        `${CONTACTS}/by-phone/${encodeURIComponent('020 7946 0958')}`,
        {},
      );
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error.details[0].field, 'params.phone');
      assert.match(bad.json().error.details[0].message, /country code/);
      // The phone in the path never reaches a log line: the route's pattern is logged.
      assert.ok(logs.some((l) => l.includes('/crm/contacts/by-phone/:phone')));
      assert.ok(!logs.some((l) => /7946|2079460958/.test(l)), 'no phone in the logs');
    });

    test('PATCH is a JSON merge patch: null removes, attributes merge, phone stays unique', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const call = caller(app, token);
      const c = (
        await call('POST', CONTACTS, {
          phone: '+16505551234',
          firstName: 'Ada',
          email: 'ada@example.test',
          attributes: { plan: 'pro', seats: 3 },
        })
      ).json().data;
      const other = (await call('POST', CONTACTS, { phone: '+16505550000' })).json().data;
      const patched = await app.inject({
        method: 'PATCH',
        url: `${CONTACTS}/${c.id}`,
        headers: { authorization: token, 'content-type': 'application/merge-patch+json' },
        payload: JSON.stringify({
          email: null,
          attributes: { seats: null, region: 'eu' },
          tags: ['x'],
        }),
      });
      assert.equal(patched.statusCode, 200, patched.body);
      const p = patched.json().data;
      assert.equal(p.email, null);
      assert.equal(p.firstName, 'Ada');
      assert.deepEqual(p.attributes, { plan: 'pro', region: 'eu' });
      assert.deepEqual(p.tags, ['x']);

      const taken = await call('PATCH', `${CONTACTS}/${c.id}`, { phone: '+1 650 555 0000' });
      assert.equal(taken.statusCode, 409);
      assert.equal(taken.json().error.details[0].id, other.id);
      const moved = await call('PATCH', `${CONTACTS}/${c.id}`, { phone: '+1 650 555 9999' });
      assert.equal(moved.json().data.phone, '+16505559999');
      const cleared = await call('PATCH', `${CONTACTS}/${c.id}`, { attributes: null, tags: null });
      assert.deepEqual([cleared.json().data.attributes, cleared.json().data.tags], [{}, []]);
      const noPhone = await call('PATCH', `${CONTACTS}/${c.id}`, { phone: null });
      assert.equal(noPhone.statusCode, 400);
    });

    test("another portal's contact is 404 on read, patch and erase; nothing changes", async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const a = caller(app, (await createPortal(services)).token);
      const b = caller(app, (await createPortal(services)).token);
      const id = (await a('POST', CONTACTS, { phone: '+16505551234', firstName: 'Ada' })).json()
        .data.id;
      for (const [method, payload] of [
        ['GET', undefined],
        ['PATCH', { firstName: 'Eve' }],
        ['DELETE', undefined],
      ] as const) {
        const res = await b(method, `${CONTACTS}/${id}`, payload);
        assert.equal(res.statusCode, 404, method);
        assert.equal(res.json().error.code, 'not_found');
      }
      assert.equal((await a('GET', `${CONTACTS}/${id}`)).json().data.firstName, 'Ada');
      assert.deepEqual((await b('GET', CONTACTS)).json().data.items, []);
    });

    test('DELETE erases: row gone, stored idempotent response gone, audited by id only', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const key = 'erase-me-1';
      const created = await app.inject({
        method: 'POST',
        url: CONTACTS,
        headers: { authorization: portal.token, 'idempotency-key': key },
        payload: { phone: '+16505551234', firstName: 'Ada' },
      });
      const id = created.json().data.id;
      const call = caller(app, portal.token);
      const erased = await call('DELETE', `${CONTACTS}/${id}`);
      assert.equal(erased.statusCode, 200);
      const data = erased.json().data;
      assert.deepEqual(
        { ...data, erasedAt: 0 },
        {
          id,
          erasedAt: 0,
          erased: { contact: 1, drafts: 0, webhookEvents: 0 },
          // The stored response of its creation goes; messaging's and tickets' erasure steps
          // anonymise the person's messages, drafts and tickets (none here).
          anonymised: {
            storedResponses: 1,
            messageRecipients: 0,
            inboundMessages: 0,
            drafts: 0,
            tickets: 0,
            ticketComments: 0,
            ticketNotes: 0,
          },
          failed: { queuedMessages: 0 },
        },
      );
      assert.equal((await call('GET', `${CONTACTS}/${id}`)).statusCode, 404);
      assert.equal((await call('DELETE', `${CONTACTS}/${id}`)).statusCode, 404);
      // The key's stored response (which held the phone and name) is gone: no replay of it.
      const retry = await app.inject({
        method: 'POST',
        url: CONTACTS,
        headers: { authorization: portal.token, 'idempotency-key': key },
        payload: { phone: '+16505551234', firstName: 'Ada' },
      });
      assert.equal(retry.statusCode, 201);
      assert.equal(retry.headers['idempotent-replayed'], undefined);
      assert.notEqual(retry.json().data.id, id);
      const events = await services.storage.db.query.auditEvents.findMany();
      const erasure = events.filter((e) => e.action === 'contact.erased');
      assert.equal(erasure.length, 1);
      assert.ok(erasure[0]!.reason!.includes(id));
      assert.ok(!JSON.stringify(events).includes('6505551234'), 'no phone in the audit log');
    });

    test('Idempotency-Key: a retry replays, another body conflicts', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const post = (payload: object) =>
        app.inject({
          method: 'POST',
          url: CONTACTS,
          headers: { authorization: token, 'idempotency-key': 'k-1' },
          payload,
        });
      const first = await post({ phone: '+16505551234' });
      const second = await post({ phone: '+1 650 555 1234' });
      assert.equal(second.statusCode, 201);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.deepEqual(second.json(), first.json());
      const other = await post({ phone: '+16505550000' });
      assert.equal(other.statusCode, 409);
      assert.equal(other.json().error.code, 'idempotency_conflict');
    });

    test('phone input: the 00 international prefix is read, an extension and control characters are refused', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const call = caller(app, (await createPortal(services)).token);
      const spaced = await call('POST', CONTACTS, { phone: '00 44 20 7183 8750' });
      assert.equal(spaced.statusCode, 201, spaced.body);
      assert.equal(spaced.json().data.phone, '+442071838750');
      const refused: [string, Record<string, string>, string][] = [
        ['extension', { phone: '+1 650 555 1234 ext. 5' }, 'body.phone'],
        ['newline in phone', { phone: '+16505551234\n' }, 'body.phone'],
        ['NEL in a name', { phone: '+16505551234', firstName: 'Ada\u0085' }, 'body.firstName'],
        ['bidi override', { phone: '+16505551234', lastName: 'a\u202Eb' }, 'body.lastName'],
        ['bidi isolate', { phone: '+16505551234', lastName: 'a\u2066b' }, 'body.lastName'],
      ];
      for (const [name, payload, field] of refused) {
        const res = await call('POST', CONTACTS, payload);
        assert.equal(res.statusCode, 400, `${name}: ${res.body}`);
        assert.equal(res.json().error.details[0].field, field, name);
      }
      assert.equal((await call('GET', CONTACTS)).json().data.items.length, 1);
    });

    test('an empty body sent as application/json is no body', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const call = caller(app, token);
      const id = (await call('POST', CONTACTS, { phone: '+16505551234' })).json().data.id;
      for (const method of ['GET', 'DELETE'] as const) {
        const res = await app.inject({
          method,
          url: `${CONTACTS}/${id}`,
          headers: { authorization: token, 'content-type': 'application/json' },
          payload: '',
        });
        assert.equal(res.statusCode, 200, `${method}: ${res.body}`);
      }
      // A route that takes a body still needs one.
      const noBody = await app.inject({
        method: 'POST',
        url: CONTACTS,
        headers: { authorization: token, 'content-type': 'application/json' },
        payload: '',
      });
      assert.equal(noBody.statusCode, 400);
      assert.equal(noBody.json().error.code, 'invalid_request');
    });

    test('import: `contacts` that is not an array is a 400, nothing written', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const call = caller(app, (await createPortal(services)).token);
      for (const contacts of ['x', { phone: '+16505551234' }, '+16505551234']) {
        const res = await call('POST', `${CONTACTS}/import`, { contacts });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().error.code, 'invalid_request');
        assert.equal(res.json().error.details[0].field, 'body.contacts');
      }
      assert.deepEqual((await call('GET', CONTACTS)).json().data.items, []);
      // A phone three times: both earlier rows name the row that was imported.
      const phone = '+16505551234';
      const res = await call('POST', `${CONTACTS}/import`, {
        contacts: [{ phone }, { phone }, { phone, firstName: 'Last' }],
      });
      assert.equal(res.json().data.created, 1);
      assert.deepEqual(
        res.json().data.failed.map((f: { index: number; message: string }) => [f.index, f.message]),
        [0, 1].map((i) => [
          i,
          'the same phone as row 2, which was imported instead (the last one wins)',
        ]),
      );
    });

    test('bad input: a clear 400 naming the field, nothing written', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const call = caller(app, (await createPortal(services)).token);
      const manyAttributes = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`a${i}`, i]));
      const cases: [string, unknown, string, RegExp][] = [
        ['no phone', { firstName: 'A' }, 'body.phone', /required/],
        ['invalid phone', { phone: '+1 123' }, 'body.phone', /not a valid phone/],
        ['no country code', { phone: '06 12 34 56 78' }, 'body.phone', /country code/],
        [
          'long name',
          { phone: '+16505551234', firstName: 'x'.repeat(101) },
          'body.firstName',
          /100/,
        ],
        [
          'control chars',
          { phone: '+16505551234', lastName: 'a\u0007b' },
          'body.lastName',
          /control/,
        ],
        [
          'attributes not object',
          { phone: '+16505551234', attributes: ['a'] },
          'body.attributes',
          /object/,
        ],
        [
          'nested attribute',
          { phone: '+16505551234', attributes: { a: { b: 1 } } },
          'body.attributes.a',
          /flat/,
        ],
        [
          'bad key',
          { phone: '+16505551234', attributes: { 'my-key': 1 } },
          'body.attributes.my-key',
          /keys must match/,
        ],
        [
          '51 attributes',
          { phone: '+16505551234', attributes: manyAttributes },
          'body.attributes',
          /at most 50/,
        ],
        [
          '21 tags',
          { phone: '+16505551234', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
          'body.tags',
          /20/,
        ],
        ['duplicate tags', { phone: '+16505551234', tags: ['a', 'a'] }, 'body.tags', /repeat/],
        [
          'bad consent',
          { phone: '+16505551234', consent: { whatsapp: 'yes' } },
          'body.consent.whatsapp',
          /./,
        ],
        ['bad email', { phone: '+16505551234', email: 'not-an-email' }, 'body.email', /email/],
        [
          'unknown field',
          { phone: '+16505551234', nickname: 'x' },
          'body.nickname',
          /not a known field/,
        ],
      ];
      for (const [name, payload, field, message] of cases) {
        const res = await call('POST', CONTACTS, payload);
        assert.equal(res.statusCode, 400, name);
        const error = res.json().error;
        assert.equal(error.code, 'invalid_request', name);
        assert.equal(error.details[0].field, field, name);
        assert.match(error.details[0].message, message, name);
      }
      assert.deepEqual((await call('GET', CONTACTS)).json().data.items, []);
      assert.equal((await call('GET', '/healthz')).statusCode, 200);
    });
  });
}
