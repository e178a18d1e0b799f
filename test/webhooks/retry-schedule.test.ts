/**
 * The production retry schedule is the one docs/webhooks.md promises receivers, the one the
 * service uses when nothing overrides it, and a `Retry-After` moves a retry only within the
 * schedule's bounds.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { nextDelayMs, RETRY_SCHEDULE_MS } from '../../src/webhooks/webhook-delivery.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { deadline } from '../helpers/deadlines.ts';
import { ROOT } from '../helpers/root.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';
import { eventually, startReceiver, type Answer } from './receiver.ts';

const UNIT_MS: Record<string, number> = { s: 1_000, min: 60_000, h: 3_600_000 };

test('the production retry schedule is the documented one', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'webhooks.md'), 'utf8').replace(/\s+/g, ' ');
  const listed = /Standard Webhooks schedule: (immediately(?:, \d+ (?:s|min|h))+)/.exec(doc);
  assert.ok(listed, 'docs/webhooks.md lists the schedule');
  const documented = listed[1]!.split(', ').map((step) => {
    if (step === 'immediately') return 0;
    const [n, unit] = step.split(' ');
    return Number(n) * UNIT_MS[unit!]!;
  });
  assert.deepEqual(RETRY_SCHEDULE_MS, documented);
});

test('Retry-After lengthens a wait up to the longest wait of the schedule, never shortens it', () => {
  const noAnswer = { retryAfterMs: null };
  assert.equal(nextDelayMs(RETRY_SCHEDULE_MS, 1, noAnswer), 5_000);
  assert.equal(nextDelayMs(RETRY_SCHEDULE_MS, 1, { retryAfterMs: 1_000 }), 5_000);
  assert.equal(nextDelayMs(RETRY_SCHEDULE_MS, 1, { retryAfterMs: 120_000 }), 120_000);
  // A day asked for: the schedule's longest wait (10 h).
  assert.equal(nextDelayMs(RETRY_SCHEDULE_MS, 1, { retryAfterMs: 86_400_000 }), 36_000_000);
  assert.equal(nextDelayMs(RETRY_SCHEDULE_MS, 8, { retryAfterMs: 1_000 }), null);
});

for (const backend of backends()) {
  describe(`the service's own retry schedule (${backend.name})`, () => {
    test('with no override, a failed delivery is retried after the documented wait', async (t) => {
      // Only the receivers' address is let through (they listen on 127.0.0.1): the schedule is
      // the service's default, as main.ts builds it.
      const { services } = await buildTestApp(
        t,
        backend,
        {},
        {},
        {
          webhooks: { addressPolicy: 'development-any-address' },
        },
      );
      await services.webhooks.start();
      await services.webhooks.startWorker();
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      const answers: Answer[] = [500, { status: 429, headers: { 'retry-after': '86400' } }];
      const ids: string[] = [];
      for (const answer of answers) {
        const receiver = await startReceiver(() => answer);
        t.after(() => receiver.close());
        const { endpoint, secret } = await services.webhooks.addEndpoint(
          portalId,
          { url: receiver.url, eventTypes: ['ticket.created'] },
          { actor: CLI_ACTOR },
        );
        receiver.secrets.push(secret);
        await services.webhooks.sendTestEvent(portalId, endpoint.id);
        ids.push(endpoint.id);
      }
      const waits = await eventually(async () => {
        const rows = await queryRows<{ endpoint: string; wait: string | null }>(
          services.storage,
          sql`select endpoint_id as endpoint,
                (extract(epoch from next_attempt_at - last_attempt_at) * 1000)::bigint::text
                  as wait
              from webhook_deliveries where portal_id = ${portalId} and attempts = 1`,
        );
        return rows.length === 2 && new Map(rows.map((r) => [r.endpoint, Number(r.wait)]));
      }, deadline(15_000));
      // A failure waits the schedule's second step; a day asked for, its longest wait.
      assert.equal(waits.get(ids[0]!), RETRY_SCHEDULE_MS[1]);
      assert.equal(waits.get(ids[1]!), Math.max(...RETRY_SCHEDULE_MS));
      assert.deepEqual([RETRY_SCHEDULE_MS[1], Math.max(...RETRY_SCHEDULE_MS)], [5_000, 36_000_000]);
    });
  });
}
