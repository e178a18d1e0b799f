import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { loadKeyring } from '../../src/platform/keyring.ts';
import { openEventPayload } from '../../src/webhooks/event-payload.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

const CONTACTS = '/api/v1/external/crm/contacts';

/** `count` valid contacts with distinct US phones from `start`. */
function rows(start: number, count: number, extra: (i: number) => object = () => ({})) {
  return Array.from({ length: count }, (_, k) => {
    const i = start + k;
    return { phone: `+1 650 55${String(i).padStart(5, '0')}`, ...extra(i) };
  });
}

async function importRows(app: FastifyInstance, token: string, contacts: unknown[]) {
  const res = await app.inject({
    method: 'POST',
    url: `${CONTACTS}/import`,
    headers: { authorization: token },
    payload: { contacts },
  });
  assert.equal(res.statusCode, 200, res.body.slice(0, 300));
  return res.json().data as {
    created: number;
    updated: number;
    unchanged: number;
    failed: { index: number; field: string; message: string }[];
  };
}

async function list(app: FastifyInstance, token: string, query: string) {
  const res = await app.inject({ url: `${CONTACTS}?${query}`, headers: { authorization: token } });
  assert.equal(res.statusCode, 200, res.body.slice(0, 300));
  return res.json().data as { items: { id: string; phone: string }[]; nextCursor: string | null };
}

for (const backend of backends()) {
  describe(`/crm/contacts pages and import (${backend.name})`, () => {
    test('2,500 contacts paged with inserts between pages: no duplicate, no gap', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      for (let start = 0; start < 2500; start += 1000) {
        const r = await importRows(app, token, rows(start, Math.min(1000, 2500 - start)));
        assert.equal(r.created, Math.min(1000, 2500 - start));
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      let extra = 10_000;
      do {
        const page = await list(app, token, `limit=100${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...page.items.map((i) => i.phone));
        cursor = page.nextCursor;
        // Someone adds a contact while the client pages.
        await importRows(app, token, rows(extra++, 1));
      } while (cursor);
      assert.equal(seen.length, 2500);
      assert.equal(new Set(seen).size, 2500, 'no duplicate');
      const expected = new Set(
        rows(0, 2500).map((r) => `+1${r.phone.replace(/\D/g, '').slice(1)}`),
      );
      for (const phone of seen) assert.ok(expected.has(phone), `${phone} is one of the 2,500`);
    });

    test('filters: tag, consent, q (names, email, phone digits), updatedSince', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const other = await createPortal(services);
      await importRows(app, token, [
        { phone: '+16505550001', firstName: 'Ada', lastName: 'Lovelace', tags: ['vip'] },
        {
          phone: '+16505550002',
          firstName: 'Adam',
          email: 'adam@example.test',
          consent: { whatsapp: 'opted_in' },
        },
        { phone: '+442079460958', lastName: 'Adams', email: 'z@example.test', tags: ['vip', 'uk'] },
        { phone: '+33612345678', firstName: 'Zoé', email: 'AD_min@example.test' },
      ]);
      await importRows(app, other.token, [
        { phone: '+16505550003', firstName: 'Ada', tags: ['vip'] },
      ]);
      const phones = async (query: string) =>
        (await list(app, token, query)).items.map((i) => i.phone).sort();
      assert.deepEqual(await phones('tag=vip'), ['+16505550001', '+442079460958']);
      assert.deepEqual(await phones('consent=opted_in'), ['+16505550002']);
      assert.deepEqual(await phones('consent=unknown&tag=uk'), ['+442079460958']);
      assert.deepEqual(await phones('q=ADA'), ['+16505550001', '+16505550002', '+442079460958']);
      assert.deepEqual(await phones('q=adam'), ['+16505550002', '+442079460958']);
      assert.deepEqual(await phones('q=ad_'), ['+33612345678'], '_ is literal, not a wildcard');
      assert.deepEqual(await phones('q=lovel'), ['+16505550001']);
      assert.deepEqual(await phones(`q=${encodeURIComponent('+44 20')}`), ['+442079460958']);
      assert.deepEqual(await phones('q=1650555000'), ['+16505550001', '+16505550002']);
      assert.deepEqual(await phones('q=zo%C3%A9'), ['+33612345678']);
      assert.deepEqual(await phones('q=nobody'), []);
      const future = new Date(Date.now() + 60_000).toISOString();
      assert.deepEqual(await phones(`updatedSince=${future}`), []);
      assert.equal((await phones('updatedSince=2020-01-01T00:00:00Z')).length, 4);
      for (const bad of [
        'limit=0',
        'limit=101',
        'cursor=nope',
        'consent=maybe',
        'updatedSince=yesterday',
      ]) {
        const res = await app.inject({
          url: `${CONTACTS}?${bad}`,
          headers: { authorization: token },
        });
        assert.equal(res.statusCode, 400, bad);
        assert.equal(res.json().error.code, 'invalid_request', bad);
      }
    });

    test('import 1,000 with a few bad rows: valid ones land, bad ones reported; then upsert counts', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const batch: unknown[] = rows(0, 1000, (i) => ({ firstName: `N${i}` }));
      batch[3] = { phone: '06 12 34 56 78' };
      batch[10] = { phone: '+16505512345', attributes: { nested: { no: true } } };
      batch[20] = 'not an object';
      batch[30] = { phone: '+16505512345', firstName: 'x'.repeat(101) };
      batch[999] = { ...(batch[0] as object), firstName: 'Last wins' };
      const result = await importRows(app, token, batch);
      assert.equal(result.created, 995);
      assert.deepEqual(
        result.failed.map((f: { index: number; field: string }) => [f.index, f.field]),
        [
          [0, 'phone'],
          [3, 'phone'],
          [10, 'attributes.nested'],
          [20, 'row'],
          [30, 'firstName'],
        ],
      );
      assert.match(result.failed[0]!.message, /row 999/);
      assert.match(result.failed[1]!.message, /country code/);
      const first = await list(app, token, `q=${encodeURIComponent('+1 650 5500000')}`);
      assert.equal(first.items.length, 1);
      const one = await app.inject({
        url: `${CONTACTS}/${first.items[0]!.id}`,
        headers: { authorization: token },
      });
      assert.equal(one.json().data.firstName, 'Last wins');

      const again = await importRows(app, token, [
        { phone: '+1 650 5500001', firstName: 'N1' },
        { phone: '+1 650 5500002', firstName: 'Changed', consent: { whatsapp: 'opted_out' } },
        { phone: '+1 650 5599999' },
      ]);
      assert.deepEqual(again, { created: 1, updated: 1, unchanged: 1, failed: [] });
      const changed = await list(app, token, 'consent=opted_out');
      assert.equal(changed.items.length, 1);
      const c = (
        await app.inject({
          url: `${CONTACTS}/${changed.items[0]!.id}`,
          headers: { authorization: token },
        })
      ).json().data;
      assert.deepEqual([c.firstName, c.consent.source], ['Changed', 'import']);
    });

    test('import: opted_out events only on a change to it; unchanged rows keep their times', async (t) => {
      const { app, services, config } = await buildTestApp(t, backend);
      // The queue takes the events' jobs; no worker runs, so nothing is delivered.
      await services.webhooks.start();
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      await services.webhooks.addEndpoint(
        portalId,
        { url: 'http://127.0.0.1:9/hooks', eventTypes: ['contact.opted_out'] },
        { actor: CLI_ACTOR },
      );
      await importRows(app, portal.token, [
        { phone: '+16505550001', consent: { whatsapp: 'opted_in' } },
        { phone: '+16505550002', consent: { whatsapp: 'opted_out' } },
        { phone: '+16505550003' },
      ]);
      const read = async () => {
        const page = (
          await app.inject({ url: CONTACTS, headers: { authorization: portal.token } })
        ).json().data.items as { id: string; phone: string; updatedAt: string; consent: object }[];
        return new Map(page.map((c) => [c.phone, c]));
      };
      const before = await read();
      const r = await importRows(app, portal.token, [
        { phone: '+16505550001', consent: { whatsapp: 'opted_out' } },
        { phone: '+16505550002', consent: { whatsapp: 'opted_out' } },
        { phone: '+16505550003', firstName: 'Named' },
        { phone: '+16505550004', consent: { whatsapp: 'opted_out' } },
      ]);
      assert.deepEqual(r, { created: 1, updated: 2, unchanged: 1, failed: [] });
      const after = await read();
      assert.deepEqual(after.get('+16505550002'), before.get('+16505550002'), 'untouched');
      assert.deepEqual(after.get('+16505550003')!.consent, before.get('+16505550003')!.consent);
      const events = await services.storage.db.query.webhookEvents.findMany();
      assert.deepEqual(
        events.map((e) => [e.type, e.contactId]),
        [['contact.opted_out', before.get('+16505550001')!.id]],
      );
      const sent = openEventPayload(
        loadKeyring(config),
        portalId,
        events[0]!.id,
        events[0]!.payload,
      );
      assert.equal(sent.data.contactId, before.get('+16505550001')!.id);
      assert.equal(sent.data.source, 'import');
    });

    test('1,001 contacts or a non-array is a 400 and nothing is written', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      for (const payload of [
        { contacts: rows(0, 1001) },
        { contacts: {} },
        { contacts: [] },
        { rows: [] },
      ]) {
        const res = await app.inject({
          method: 'POST',
          url: `${CONTACTS}/import`,
          headers: { authorization: token },
          payload,
        });
        assert.equal(res.statusCode, 400);
        assert.equal(res.json().error.code, 'invalid_request');
        assert.ok(res.json().error.details.length > 0);
      }
      assert.deepEqual((await list(app, token, '')).items, []);
    });
  });
}
