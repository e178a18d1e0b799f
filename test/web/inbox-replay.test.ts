/**
 * `/inbox/events` after a network drop, over real HTTP and real storage: every event carries an
 * id; a reconnect with `Last-Event-ID` first replays, from the database, the conversations that
 * had a message while the stream was down (and only the portal's own), then `ready`; an id too
 * old, or one that is not an id, replays `{"all": true}`; nothing changed replays nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { REPLAY_WINDOW_MS } from '../../src/web/inbox/inbox-stream-routes.tsx';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, portalWithPassword } from '../helpers/web.ts';
import { readEvents, type ServerEvent } from './inbox-events.ts';
import { personWrites } from './inbox-person.ts';

const ready = (events: ServerEvent[]) => events.some((e) => e.event === 'ready');

for (const backend of backends()) {
  describe(`/inbox/events replay (${backend.name})`, () => {
    test('events have ids; a reconnect with Last-Event-ID replays what changed meanwhile, bounded', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const a = await portalWithPassword(services);
      const b = await portalWithPassword(services);
      const aId = await services.accounts.portalIdFor(a.portalCode);
      const bId = await services.accounts.portalIdFor(b.portalCode);
      const browser = new Browser(app);
      await browser.signIn(a.email);
      const base = await app.listen({ host: '127.0.0.1', port: 0 });
      const cookie = [...browser.jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const open = (lastEventId?: string) =>
        readEvents(
          `${base}/inbox/events`,
          cookie,
          ready,
          async () => {},
          5_000,
          lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
        );

      // First connection: an id on every event.
      const first = await open();
      assert.equal(first.status, 200);
      const lastId = first.events.at(-1)?.id;
      assert.ok(lastId, 'the ready event has an id');
      assert.match(lastId, /^[0-9]+$/);

      // The stream is down; the portal (and another) gets a message.
      const ada = await personWrites(services, aId, {
        phone: '+16505551234',
        text: 'hi',
        agoMs: 0,
      });
      await personWrites(services, bId, { phone: '+16505550000', text: 'other', agoMs: 0 });

      // Reconnect: the missed conversation is named before `ready`, never another portal's.
      const again = await open(lastId);
      assert.deepEqual(
        again.events.map((e) => [e.event, JSON.parse(e.data) as unknown]),
        [
          ['change', { conversationIds: [ada.conversationId] }],
          ['ready', {}],
        ],
      );
      assert.ok(again.events.every((e) => e.id && /^[0-9]+$/.test(e.id)));

      // An id too old to replay by name, or not an id at all: read everything again.
      for (const id of [String(Date.now() - REPLAY_WINDOW_MS - 60_000), 'x1', '']) {
        const stale = await open(id);
        assert.deepEqual(
          stale.events.map((e) => [e.event, JSON.parse(e.data) as unknown]),
          [
            ['change', { all: true }],
            ['ready', {}],
          ],
          `Last-Event-ID ${JSON.stringify(id)}`,
        );
      }

      // Nothing new since a recent id (beyond the replay's margin): no change.
      const future = await open(String(Date.now() + 120_000));
      assert.deepEqual(
        future.events.map((e) => e.event),
        ['ready'],
      );
    });
  });
}
