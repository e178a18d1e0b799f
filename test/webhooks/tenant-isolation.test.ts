/**
 * Invariant 16: one tenant's endpoint never delays another tenant's webhooks by more than a
 * second. A portal whose endpoint hangs (every attempt runs into the production 15 s timeout),
 * with a backlog of events, while another portal's events are emitted one after another: the
 * healthy portal's deliveries arrive on time.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import type { Services } from '../../src/services.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { eventually, startReceiver, type Receiver } from './receiver.ts';

/**
 * How late a healthy portal's delivery may arrive after its event committed, in ms. Without a
 * hanging neighbour it takes up to one idle poll (0.5 s) plus an attempt (a few ms); the
 * invariant allows one second more; the rest is headroom for a machine shared by many test
 * processes. A delivery stuck behind the hanging portal arrives no earlier than that portal's
 * 15 s attempt timeout, so the bound still tells the two apart by a factor of five.
 */
const ON_TIME_MS = 3_000;

async function portalWithEndpoint(services: Services, receiver: Receiver) {
  const portal = await createPortal(services);
  const portalId = await services.accounts.portalIdFor(portal.portalCode);
  const { secret } = await services.webhooks.addEndpoint(
    portalId,
    { url: receiver.url, eventTypes: ['ticket.created'] },
    { actor: CLI_ACTOR },
  );
  receiver.secrets.push(secret);
  return portalId;
}

/** Emit one ticket.created event for `portalId`; resolves once it committed, with the time. */
async function emitTicket(services: Services, portalId: number, ticketId: string) {
  await services.storage.db.transaction((tx) =>
    services.webhooks.emit(tx, portalId, 'ticket.created', {
      ticketId,
      priority: 'normal',
      createdAt: new Date().toISOString(),
    }),
  );
  return Date.now();
}

describe('webhook tenant isolation', { concurrency: true }, () => {
  for (const backend of backends()) {
    test(`a hanging endpoint does not delay another portal's webhooks (${backend.name})`, async (t) => {
      // Production timing: the 15 s attempt timeout and the Standard Webhooks schedule.
      const { services } = await buildTestApp(
        t,
        backend,
        {},
        {},
        {
          webhooks: { addressPolicy: 'development-any-address' },
        },
      );
      const hanging = await startReceiver(() => 'stall');
      const healthy = await startReceiver(() => 204);
      t.after(() => Promise.all([hanging.close(), healthy.close()]));
      await services.webhooks.start();
      const slowPortal = await portalWithEndpoint(services, hanging);
      const fastPortal = await portalWithEndpoint(services, healthy);

      // A backlog for the hanging portal, queued before the healthy portal's first event.
      for (let i = 0; i < 20; i++) await emitTicket(services, slowPortal, `tkt_slow${i}`);
      await services.webhooks.startWorker();
      await hanging.waitFor(1, 10_000);

      const committedAt = new Map<string, number>();
      for (let i = 0; i < 6; i++) {
        committedAt.set(`tkt_fast${i}`, await emitTicket(services, fastPortal, `tkt_fast${i}`));
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
      const arrived = await healthy.waitFor(6, 60_000);
      const late = arrived.map((r) => {
        const ticketId = String(r.event?.data.ticketId);
        return { ticketId, ms: r.at - committedAt.get(ticketId)! };
      });
      t.diagnostic(
        `healthy portal's deliveries, ms after commit: ${late.map((l) => l.ms).join(', ')}`,
      );
      assert.ok(
        late.every((l) => l.ms < ON_TIME_MS),
        `every healthy delivery within ${ON_TIME_MS} ms: ${JSON.stringify(late)}`,
      );
      // The hanging portal's deliveries are still pending (retried later), none lost.
      const slow = await eventually(async () => {
        const d = await services.webhooks.recentDeliveries(slowPortal);
        return d.length === 20 && d;
      });
      assert.ok(slow.every((d) => d.status === 'pending'));
    });
  }
});
