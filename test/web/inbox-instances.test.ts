/**
 * The inbox's event stream across instances over one database: a conversation change
 * committed on instance A reaches a signed-in stream on instance B (ids only), a rolled-back one
 * never does; on PostgreSQL, when the listening sessions are killed, the stream is told to read
 * everything again once its instance listens again.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import {
  CONVERSATION_LISTENER_NAME,
  notifyConversationChanges,
} from '../../src/messaging/store/conversation-changes.ts';
import { openInstances } from '../helpers/instances.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, portalWithPassword } from '../helpers/web.ts';
import { readEvents } from './inbox-events.ts';

for (const backend of backends()) {
  describe(`/inbox/events across instances (${backend.name})`, () => {
    test('a change committed on A reaches B; a rollback never does; a lost listener says read all', async (t) => {
      const [a, b] = await openInstances(t, backend, 2);
      const portal = await portalWithPassword(b!.services);
      const portalId = await b!.services.accounts.portalIdFor(portal.portalCode);
      const browser = new Browser(b!.app);
      await browser.signIn(portal.email);
      const url = await b!.app.listen({ host: '127.0.0.1', port: 0 });
      const cookie = [...browser.jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const rolledBack = 'cnv_RolledBack0000000001';
      const committed = 'cnv_Committed00000000001';
      const db = a!.services.storage.db;

      const stream = await readEvents(
        `${url}/inbox/events`,
        cookie,
        (events) => events.some((e) => e.event === 'change'),
        async () => {
          await db
            .transaction(async (tx) => {
              await notifyConversationChanges(tx, [{ portalId, conversationId: rolledBack }]);
              throw new Error('roll back');
            })
            .catch(() => {});
          await db.transaction((tx) =>
            notifyConversationChanges(tx, [{ portalId, conversationId: committed }]),
          );
        },
      );
      assert.equal(stream.status, 200);
      assert.deepEqual(
        stream.events.filter((e) => e.event === 'change').map((e) => JSON.parse(e.data) as unknown),
        [{ conversationIds: [committed] }],
      );

      if (backend.name !== 'postgres') return;
      const again = await readEvents(
        `${url}/inbox/events`,
        cookie,
        (events) => events.some((e) => e.event === 'change'),
        async () => {
          await db.execute(
            sql`select pg_terminate_backend(pid) from pg_stat_activity
                where application_name = ${CONVERSATION_LISTENER_NAME}`,
          );
        },
        10_000,
      );
      assert.deepEqual(
        again.events.filter((e) => e.event === 'change').map((e) => JSON.parse(e.data) as unknown),
        [{ all: true }],
      );
    });
  });
}
