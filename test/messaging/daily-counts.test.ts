/**
 * The maintained daily counts of messages (reports/daily-counts.ts), on both backends: every
 * path that changes a status (the provider's status events, the worker's final failure, the
 * revocation step, the erasure step) counts it in the same transaction, by the UTC day the
 * message was created, so the counts always equal a count over the messages themselves (the
 * reports summary, `refreshDailyCounts`); concurrent events of one portal add up; a send writes
 * no count; a rolled-back change leaves none.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { messageDailyCounts } from '../../src/db/schema/index.ts';
import {
  failQueuedMessage,
  failQueuedOfErased,
  failQueuedOnRevocation,
  UNDELIVERED_ERROR,
} from '../../src/messaging/store/message-failures.ts';
import { newMessageId } from '../../src/messaging/outbound/message-sending.ts';
import { insertMessage } from '../../src/messaging/store/messages-repository.ts';
import { refreshDailyCounts } from '../../src/messaging/store/daily-counts.ts';
import type { Services } from '../../src/services.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

const DAY_1 = '2026-11-20';
const DAY_2 = '2026-11-21';
/** The last millisecond of DAY_1 and the first of DAY_2 (UTC): the bucket edge. */
const LATE = new Date(`${DAY_1}T23:59:59.999Z`);
const EARLY = new Date(`${DAY_2}T00:00:00.000Z`);

/** A queued message created at `createdAt` (its credit is not this test's concern). */
async function queued(services: Services, portalId: number, createdAt: Date, to = '+16505550101') {
  const id = newMessageId();
  await services.storage.db.transaction(async (tx) => {
    await insertMessage(tx, {
      id,
      portalId,
      waId: to,
      phoneNumberId: '1234567891',
      type: 'text',
      textBody: 'Hello',
      priceMinor: 1,
      currency: 'EUR',
      createdAt,
      queuedAt: createdAt,
    });
  });
  return id;
}

const event = (id: string, status: 'sent' | 'delivered' | 'read' | 'failed') => ({
  wamid: `wamid.${id}`,
  status,
  timestamp: new Date(),
  recipientId: '16505550101',
  bizOpaqueCallbackData: id,
  errors: status === 'failed' ? [{ code: 131026, title: 'Message undeliverable' }] : [],
});

/** The chart's reading of the two days. */
function countsOf(services: Services, portalId: number) {
  return services.messaging.dailyCounts({ portalId }, { since: DAY_1, until: '2026-11-22' });
}

/** The same days counted over the messages themselves (the reports summary). */
async function summaryOf(services: Services, portalId: number) {
  const periods = await services.messaging.summary(
    { portalId },
    { since: `${DAY_1}T00:00:00.000Z`, until: '2026-11-22T00:00:00.000Z', granularity: 'day' },
  );
  return periods
    .map((p) => ({ day: p.start.slice(0, 10), ...p.counts }))
    .map(({ day, sent, delivered, read, failed }) => ({ day, sent, delivered, read, failed }))
    .filter((d) => d.sent + d.delivered + d.read + d.failed > 0);
}

for (const backend of backends()) {
  describe(`messages' daily counts (${backend.name})`, () => {
    test('every status path counts its change by creation day; the counts equal a recount', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      await services.messaging.addCredit({ portalId, amount: 100, note: 'n', actor: CLI_ACTOR });
      const db = services.storage.db;
      const sink = services.messaging.webhookSink;

      const read = await queued(services, portalId, LATE);
      const delivered = await queued(services, portalId, EARLY);
      const sentThenFailed = await queued(services, portalId, EARLY);
      const failedFromQueued = await queued(services, portalId, EARLY);
      const undelivered = await queued(services, portalId, LATE);
      await queued(services, portalId, EARLY); // failed by the revocation
      await queued(services, portalId, EARLY, '+16505550199'); // failed by the erasure
      // A send writes no count: nothing before the first status change.
      assert.deepEqual(await countsOf(services, portalId), []);

      await sink.messageStatuses(portalId, '1234567891', [
        event(read, 'sent'),
        event(read, 'delivered'),
        event(read, 'read'),
        event(read, 'delivered'), // backwards: changes nothing
        event(delivered, 'delivered'), // implies sent
        event(delivered, 'delivered'), // duplicate
        event(sentThenFailed, 'sent'),
        event(sentThenFailed, 'failed'),
        event(failedFromQueued, 'failed'),
      ]);
      assert.equal(await failQueuedMessage(db, undelivered, UNDELIVERED_ERROR), true);
      // The revocation fails every queued message of the portal not accepted by the provider:
      // `revoked` and `erased` alike. So the erasure runs first, on its own person.
      await db.transaction((tx) =>
        failQueuedOfErased(tx, { portalId, id: 'ctc_none', phone: '+16505550199' }),
      );
      await db.transaction((tx) => failQueuedOnRevocation(tx, { portalId, reason: 'disconnect' }));

      const expected = [
        { day: DAY_1, sent: 0, delivered: 0, read: 1, failed: 1 },
        { day: DAY_2, sent: 0, delivered: 1, read: 0, failed: 4 },
      ];
      assert.deepEqual(await countsOf(services, portalId), expected);
      assert.deepEqual(await summaryOf(services, portalId), expected);
      // The changes went to more than one row of a day (shards), and a recount from the
      // messages gives the same days.
      const rows = await db
        .select()
        .from(messageDailyCounts)
        .where(eq(messageDailyCounts.portalId, portalId));
      assert.ok(rows.length > 2, `${rows.length} rows`);
      await refreshDailyCounts(db, portalId);
      assert.deepEqual(await countsOf(services, portalId), expected);

      // Another portal's counts are its own.
      const other = await createPortal(services);
      const otherId = await services.accounts.portalIdFor(other.portalCode);
      assert.deepEqual(await countsOf(services, otherId), []);
    });

    test('concurrent status events of one portal add up; a rolled-back change counts nothing', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      await services.messaging.addCredit({ portalId, amount: 100, note: 'n', actor: CLI_ACTOR });
      const ids = [];
      for (let i = 0; i < 40; i++) ids.push(await queued(services, portalId, EARLY));
      const sink = services.messaging.webhookSink;
      // Each message's events in order on its own path; the 40 paths at once.
      await Promise.all(
        ids.map(async (id, i) => {
          await sink.messageStatuses(portalId, '1234567891', [event(id, 'sent')]);
          if (i % 2 === 0)
            await sink.messageStatuses(portalId, '1234567891', [event(id, 'delivered')]);
          if (i % 4 === 0) await sink.messageStatuses(portalId, '1234567891', [event(id, 'read')]);
        }),
      );
      const expected = [{ day: DAY_2, sent: 20, delivered: 10, read: 10, failed: 0 }];
      assert.deepEqual(await countsOf(services, portalId), expected);
      assert.deepEqual(await summaryOf(services, portalId), expected);

      const db = services.storage.db;
      await queued(services, portalId, EARLY);
      await assert.rejects(
        db.transaction(async (tx) => {
          await failQueuedOnRevocation(tx, { portalId, reason: 'disconnect' });
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      assert.deepEqual(await countsOf(services, portalId), expected);
    });
  });
}
