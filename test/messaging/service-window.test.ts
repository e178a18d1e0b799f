/**
 * The service window has one rule, read alike by every reader, on both backends: a person's
 * message opens 24 hours with the number written to; just before the end every reader says
 * open, at the end and after every reader says closed — the send check (`checkSend`, 422
 * `outside_service_window`), the API's view (`windowExpiresAt`), the `window=open` filter, and
 * the `conversation.window_closing` sweep, which announces the same closing instant.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  claimClosingWindows,
  listConversationPage,
} from '../../src/messaging/conversations/conversations-repository.ts';
import { toConversation } from '../../src/messaging/conversations/conversation-view.ts';
import {
  findServiceWindow,
  SERVICE_WINDOW_MS,
  serviceWindowAt,
} from '../../src/messaging/store/service-window.ts';
import { checkSend } from '../../src/messaging/outbound/send-rules.ts';
import { AppError } from '../../src/platform/errors.ts';
import { messagingSetup } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';

const HOUR = 3_600_000;

test('the rule: open before last inbound + 24 h, closed from that instant', () => {
  const at = new Date('2026-11-20T10:00:00.000Z');
  const end = at.getTime() + SERVICE_WINDOW_MS;
  assert.equal(SERVICE_WINDOW_MS, 24 * HOUR);
  assert.deepEqual(serviceWindowAt(at, new Date(end - 1)), {
    open: true,
    expiresAt: new Date(end),
  });
  assert.deepEqual(serviceWindowAt(at, new Date(end)), { open: false, expiresAt: null });
  assert.deepEqual(serviceWindowAt(at, at), { open: true, expiresAt: new Date(end) });
  assert.deepEqual(serviceWindowAt(null, at), { open: false, expiresAt: null });
});

for (const backend of backends()) {
  describe(`service window readers agree (${backend.name})`, () => {
    test('the send check, the view, the filter and the sweep at the window’s end', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const db = s.services.storage.db;
      const wrote = new Date(Math.floor(Date.now() / 1000) * 1000 - HOUR);
      await s.services.messaging.webhookSink.inboundMessages(s.portalId, s.numbers[0]!, [
        {
          wamid: 'wamid.window-end',
          from: '16505552222',
          timestamp: wrote,
          type: 'text',
          content: { type: 'text', text: { body: 'hi' } },
        },
      ]);
      const end = wrote.getTime() + SERVICE_WINDOW_MS;
      const sends = async (now: Date) => {
        try {
          await checkSend({
            db,
            provider: s.services.messagingProvider,
            portalId: s.portalId,
            input: { to: '+16505552222', from: s.numbers[0]!, type: 'text', text: { body: 'x' } },
            now,
          });
          return true;
        } catch (err) {
          assert.ok(err instanceof AppError && err.code === 'outside_service_window', String(err));
          return false;
        }
      };
      for (const [offset, open] of [
        [-1, true],
        [0, false],
        [1, false],
      ] as const) {
        const now = new Date(end + offset);
        const label = `${offset} ms from the end`;
        assert.equal(await sends(now), open, `${label}: the send check`);
        const page = await listConversationPage(db, s.portalId, { limit: 10, filter: {} });
        const row = page.rows[0]!;
        assert.equal(toConversation(row, null, now).windowExpiresAt !== null, open, label);
        const filtered = await listConversationPage(db, s.portalId, {
          limit: 10,
          filter: { windowOpenAt: now },
        });
        assert.equal(filtered.rows.length, open ? 1 : 0, `${label}: window=open`);
        const window = await findServiceWindow(db, {
          portalId: s.portalId,
          contactId: row.contactId,
          phoneNumberId: s.numbers[0]!,
          now,
        });
        assert.equal(window.open, open, label);
      }
      // The sweep an hour ahead announces the same end; past the end it has nothing to claim.
      assert.deepEqual(await claimClosingWindows(db, new Date(end), HOUR), []);
      const due = await claimClosingWindows(db, new Date(end - HOUR), HOUR);
      assert.deepEqual(
        due.map((w) => w.expiresAt.toISOString()),
        [new Date(end).toISOString()],
      );
    });
  });
}
