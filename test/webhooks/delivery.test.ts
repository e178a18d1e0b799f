import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { runCommand } from '../../src/cli/commands.ts';
import { CLI_ACTOR, listAuditEvents } from '../../src/audit/audit-log.ts';
import { generateKeyEntry } from '../../src/platform/keyring.ts';
import { createLogger } from '../../src/platform/logger.ts';
import type { ResealResult } from '../../src/db/sealing.ts';
import { createServices, type Services } from '../../src/services.ts';
import { buildTestApp, createPortal, testConfig } from '../helpers/app.ts';
import { connectPortal, startTestProvider } from '../helpers/provider.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';
import { eventually, startReceiver, type Answer } from './receiver.ts';

const FAST = {
  retryScheduleMs: [0, 50, 50, 50, 50, 50, 50, 50],
  attemptTimeoutMs: 2_000,
  addressPolicy: 'development-any-address' as const,
  // A timed-out attempt opens the endpoint's circuit for this long (30 s in production).
  gate: { openMs: 50 },
};

async function setUp(
  t: Parameters<typeof buildTestApp>[0],
  backend: Parameters<typeof buildTestApp>[1],
  answer?: (n: number) => Answer | Promise<Answer>,
  overrides: typeof FAST = FAST,
  env: Record<string, string> = {},
) {
  const built = await buildTestApp(t, backend, env, {}, { webhooks: overrides });
  const receiver = await startReceiver(answer);
  t.after(() => receiver.close());
  await built.services.webhooks.start();
  const portal = await createPortal(built.services);
  const portalId = await built.services.accounts.portalIdFor(portal.portalCode);
  return { ...built, receiver, portal, portalId };
}

async function addEndpoint(services: Services, portalId: number, url: string, types: string[]) {
  const added = await services.webhooks.addEndpoint(
    portalId,
    { url, eventTypes: types },
    { actor: CLI_ACTOR },
  );
  assert.match(added.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  return added;
}

// The backends run side by side: the file's time is mostly waiting for the queue's polls
// (every half second), not work, and each backend has its own app, database and receiver.
describe('outbound webhooks', { concurrency: true }, () => {
  for (const backend of backends()) {
    // One test at a time within a backend (subtests would inherit `concurrency: true`).
    describe(`outbound webhooks (${backend.name})`, { concurrency: 1 }, () => {
      test('a ticket.created delivery verifies with the receiver of the how-to guide; test event too', async (t) => {
        const { app, services, receiver, portal, portalId, logs } = await setUp(t, backend);
        const { secret, endpoint } = await addEndpoint(services, portalId, receiver.url, [
          'ticket.created',
        ]);
        receiver.secrets.push(secret);
        await services.webhooks.startWorker();
        const created = await app.inject({
          method: 'POST',
          url: '/api/v1/external/support/tickets',
          headers: { authorization: portal.token },
          payload: { subject: 'Printer on fire', description: 'It is on fire.' },
        });
        assert.equal(created.statusCode, 201);
        const ticketId = created.json<{ data: { id: string } }>().data.id;
        const [first] = await receiver.waitFor(1);
        assert.ok(first!.event, 'the signature verifies with the reference library');
        assert.equal(first!.event.type, 'ticket.created');
        assert.equal(first!.event.data.ticketId, ticketId);
        assert.equal(first!.headers['webhook-id'], first!.headers['webhook-id']);
        assert.match(String(first!.headers['webhook-id']), /^evt_/);
        assert.ok(!first!.body.includes('fire'), 'no ticket text in the payload');

        await services.webhooks.sendTestEvent(portalId, endpoint.id);
        const [, test2] = await receiver.waitFor(2);
        assert.equal(test2!.event?.type, 'webhook.test');

        // Rotation: both signatures for 24 h; a receiver with either secret verifies.
        const rotated = await services.webhooks.rotateSecret(portalId, endpoint.id, {
          actor: CLI_ACTOR,
        });
        receiver.secrets.splice(0, 1, rotated.secret);
        await services.webhooks.sendTestEvent(portalId, endpoint.id);
        const [, , third] = await receiver.waitFor(3);
        assert.ok(third!.event, 'verifies with the new secret');
        assert.equal(String(third!.headers['webhook-signature']).split(' ').length, 2);
        receiver.secrets.splice(0, 1, secret);
        await services.webhooks.sendTestEvent(portalId, endpoint.id);
        const [, , , fourth] = await receiver.waitFor(4);
        assert.ok(fourth!.event, 'verifies with the previous secret during the overlap');

        const deliveries = await eventually(async () => {
          const d = await services.webhooks.recentDeliveries(portalId);
          return d.length === 4 && d.every((x) => x.status === 'succeeded') && d;
        });
        assert.ok(deliveries.every((d) => d.lastStatusCode === 204 && d.lastLatencyMs !== null));
        const serialized = logs.join('\n');
        assert.ok(!serialized.includes(secret) && !serialized.includes(rotated.secret));
        const actions = (await listAuditEvents(services.storage.db, portalId)).map((e) => e.action);
        assert.ok(actions.includes('webhook_endpoint.created'));
        assert.ok(actions.includes('webhook_endpoint.secret_rotated'));
      });

      test('keys rotate re-seals the live secrets: deliveries sign with only the new key listed', async (t) => {
        const oldKey = generateKeyEntry('old');
        const { services, receiver, portalId } = await setUp(t, backend, undefined, FAST, {
          TOKEN_ENCRYPTION_KEYS: oldKey,
        });
        const { secret, endpoint } = await addEndpoint(services, portalId, receiver.url, [
          'ticket.created',
        ]);
        // A rotation under way: the previous secret still signs for 24 h and is re-sealed too.
        const rotated = await services.webhooks.rotateSecret(portalId, endpoint.id, {
          actor: CLI_ACTOR,
        });
        const newKey = generateKeyEntry('new');
        const withKeys = (keys: string) =>
          createServices({
            config: testConfig({ TOKEN_ENCRYPTION_KEYS: keys }),
            storage: services.storage,
            logger: createLogger('silent'),
            overrides: { webhooks: FAST },
          });
        const both = withKeys(`${newKey},${oldKey}`);
        // The current and the previous secret: one value each.
        const secrets = (r: unknown) =>
          (r as ResealResult).columns
            .filter((c) => c.column.startsWith('webhook_endpoints.'))
            .map((c) => c.resealed);
        assert.deepEqual(secrets(await runCommand(both, 'keys rotate', {})), [1, 1]);
        assert.deepEqual(secrets(await runCommand(both, 'keys rotate', {})), [0, 0]);

        const onlyNew = withKeys(newKey);
        // Stopped at the end, before the suite's storage closes; the hook only after a failure.
        let running = true;
        const stop = async () => {
          if (!running) return;
          running = false;
          await onlyNew.stop();
        };
        t.after(() => stop().catch(() => undefined));
        await onlyNew.webhooks.start();
        await onlyNew.webhooks.startWorker();
        await onlyNew.webhooks.sendTestEvent(portalId, endpoint.id);
        receiver.secrets.push(rotated.secret);
        const [withNew] = await receiver.waitFor(1);
        assert.ok(withNew!.event, 'verifies with the current secret');
        assert.equal(String(withNew!.headers['webhook-signature']).split(' ').length, 2);
        receiver.secrets.splice(0, 1, secret);
        await onlyNew.webhooks.sendTestEvent(portalId, endpoint.id);
        const [, withPrevious] = await receiver.waitFor(2);
        assert.ok(withPrevious!.event, 'verifies with the previous secret');
        const rows = await queryRows<{ reason: string }>(
          services.storage,
          sql`select reason from audit_events where action = 'encryption_key.rotated' order by id`,
        );
        assert.equal(
          rows[0]?.reason,
          're-sealed 2 value(s) under key new; 0 left under other keys or in clear',
        );
        await stop();
      });

      test('500 three times, then 200: the fourth attempt lands, same webhook-id', async (t) => {
        const { services, receiver, portalId } = await setUp(t, backend, (n) =>
          n <= 3 ? 500 : 200,
        );
        const { secret } = await addEndpoint(services, portalId, receiver.url, [
          'contact.opted_out',
        ]);
        receiver.secrets.push(secret);
        await services.webhooks.startWorker();
        const contact = await services.contacts.createContact({
          principal: { portalId },
          input: { phone: '+14155550123' },
        });
        await services.contacts.patchContact({ portalId }, contact.body.data.id, {
          consent: { whatsapp: 'opted_out' },
        });
        const attempts = await receiver.waitFor(4);
        const ids = new Set(attempts.map((a) => a.headers['webhook-id']));
        assert.equal(ids.size, 1, 'one webhook-id across retries');
        assert.ok(attempts.every((a) => a.event?.type === 'contact.opted_out'));
        assert.equal(attempts[0]!.event?.data.contactId, contact.body.data.id);
        assert.ok(!attempts[0]!.body.includes('4155550123'), 'no phone in the payload');
        const [delivery] = await eventually(async () => {
          const d = await services.webhooks.recentDeliveries(portalId);
          return d[0]?.status === 'succeeded' && d;
        });
        assert.equal(delivery!.attempts, 4);
        assert.equal(delivery!.lastStatusCode, 200);
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.equal(receiver.received.length, 4, 'no attempt after the success');
      });

      test('a stalled receiver is cut at the timeout and retried', async (t) => {
        const { services, receiver, portalId } = await setUp(
          t,
          backend,
          (n) => (n === 1 ? 'stall' : 200),
          { ...FAST, attemptTimeoutMs: 400 },
        );
        const { secret, endpoint } = await addEndpoint(services, portalId, receiver.url, [
          'ticket.created',
        ]);
        receiver.secrets.push(secret);
        await services.webhooks.startWorker();
        await services.webhooks.sendTestEvent(portalId, endpoint.id);
        const [a, b] = await receiver.waitFor(2);
        assert.equal(a!.headers['webhook-id'], b!.headers['webhook-id']);
        assert.ok(b!.at - a!.at >= 400, 'the retry came after the timeout');
        const [delivery] = await eventually(async () => {
          const d = await services.webhooks.recentDeliveries(portalId);
          return d[0]?.status === 'succeeded' && d;
        });
        assert.equal(delivery!.attempts, 2);
      });

      test('410 disables the endpoint, with the reason and an audit row', async (t) => {
        const { services, receiver, portalId } = await setUp(t, backend, () => 410);
        const { secret, endpoint } = await addEndpoint(services, portalId, receiver.url, [
          'ticket.created',
        ]);
        receiver.secrets.push(secret);
        await services.webhooks.startWorker();
        await services.webhooks.sendTestEvent(portalId, endpoint.id);
        const [listed] = await eventually(async () => {
          const e = await services.webhooks.listEndpoints(portalId);
          return e[0]?.enabled === false && e;
        });
        assert.match(listed!.disabledReason ?? '', /410/);
        const audit = await listAuditEvents(services.storage.db, portalId);
        assert.ok(audit.some((e) => e.action === 'webhook_endpoint.disabled'));
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.equal(receiver.received.length, 1, 'no retry after 410');
      });

      test('410 to two attempts at once: the endpoint is disabled once, one audit row', async (t) => {
        // Both attempts are in flight before either is answered.
        let bothIn!: () => void;
        const held = new Promise<void>((resolve) => (bothIn = resolve));
        const { services, receiver, portalId } = await setUp(t, backend, async (n) => {
          if (n >= 2) bothIn();
          await held;
          return 410;
        });
        const { secret, endpoint } = await addEndpoint(services, portalId, receiver.url, [
          'ticket.created',
        ]);
        receiver.secrets.push(secret);
        await services.webhooks.sendTestEvent(portalId, endpoint.id);
        await services.webhooks.sendTestEvent(portalId, endpoint.id);
        await services.webhooks.startWorker();
        await receiver.waitFor(2);
        await eventually(async () => {
          const d = await services.webhooks.recentDeliveries(portalId);
          return d.every((x) => x.status === 'failed') && d;
        });
        const audit = await listAuditEvents(services.storage.db, portalId);
        assert.equal(audit.filter((e) => e.action === 'webhook_endpoint.disabled').length, 1);
      });

      test('Retry-After on 429 is honoured, up to the longest wait of the schedule', async (t) => {
        const answers: Answer[] = [
          { status: 429, headers: { 'retry-after': '1' } },
          { status: 429, headers: { 'retry-after': '3600' } },
          204,
        ];
        const { services, receiver, portalId } = await setUp(t, backend, (n) => answers[n - 1]!, {
          ...FAST,
          retryScheduleMs: [0, 50, 50, 1_500],
        });
        const { secret, endpoint } = await addEndpoint(services, portalId, receiver.url, [
          'ticket.created',
        ]);
        receiver.secrets.push(secret);
        await services.webhooks.startWorker();
        await services.webhooks.sendTestEvent(portalId, endpoint.id);
        // The second attempt waits the second asked for (not the schedule's 50 ms); the third
        // waits the schedule's longest, 1.5 s, not the hour asked for.
        const [first, second, third] = await receiver.waitFor(3, 20_000);
        assert.ok(second!.at - first!.at >= 1_000, `${second!.at - first!.at} ms`);
        assert.ok(third!.at - second!.at >= 1_500, `${third!.at - second!.at} ms`);
        const [delivery] = await eventually(async () => {
          const d = await services.webhooks.recentDeliveries(portalId);
          return d[0]?.status === 'succeeded' && d;
        });
        assert.equal(delivery!.attempts, 3);
      });

      test("an event's data is sealed in its row and opened to send; a resend of a row with plain data still delivers", async (t) => {
        const { services, receiver, portalId } = await setUp(t, backend);
        const { secret } = await addEndpoint(services, portalId, receiver.url, ['ticket.created']);
        receiver.secrets.push(secret);
        await services.webhooks.startWorker();
        const data = {
          ticketId: 'tkt_sealed',
          priority: 'normal',
          createdAt: new Date().toISOString(),
        };
        await services.storage.db.transaction((tx) =>
          services.webhooks.emit(tx, portalId, 'ticket.created', data),
        );
        const [first] = await receiver.waitFor(1);
        assert.deepEqual(first!.event?.data, data);
        const [row] = await queryRows<{ id: string; payload: Record<string, unknown> }>(
          services.storage,
          sql`select id, payload from webhook_events where portal_id = ${portalId}`,
        );
        assert.equal(row!.id, first!.headers['webhook-id']);
        assert.deepEqual(Object.keys(row!.payload).sort(), ['sealedData', 'timestamp', 'type']);
        assert.ok(!JSON.stringify(row).includes('tkt_sealed'), 'the data is sealed');

        // A row written before events were sealed: its plain data is sent as it is.
        const plain = { type: 'ticket.created', timestamp: new Date().toISOString(), data };
        await queryRows(
          services.storage,
          sql`update webhook_events set payload = ${JSON.stringify(plain)}::jsonb where id = ${row!.id}`,
        );
        const [delivery] = await services.webhooks.recentDeliveries(portalId);
        await services.webhooks.resend(portalId, delivery!.id);
        const [, second] = await receiver.waitFor(2);
        assert.ok(second!.event, 'the signature verifies');
        assert.deepEqual(second!.event.data, data);
        assert.equal(second!.headers['webhook-id'], row!.id);
      });

      test('a rolled-back change sends nothing', async (t) => {
        const { services, receiver, portalId } = await setUp(t, backend);
        await addEndpoint(services, portalId, receiver.url, ['ticket.created']);
        await assert.rejects(
          services.storage.db.transaction(async (tx) => {
            await services.webhooks.emit(tx, portalId, 'ticket.created', {
              ticketId: 'tkt_x',
              priority: 'normal',
              createdAt: new Date().toISOString(),
            });
            throw new Error('roll back');
          }),
        );
        assert.deepEqual(await services.webhooks.recentDeliveries(portalId), []);
      });

      test('a disconnect produces connection.revoked within a second', async (t) => {
        const p = await startTestProvider(t);
        const { services, receiver, portal, portalId } = await setUp(
          t,
          backend,
          undefined,
          FAST,
          p.env,
        );
        const { secret } = await addEndpoint(services, portalId, receiver.url, [
          'connection.connected',
          'connection.revoked',
        ]);
        receiver.secrets.push(secret);
        await services.webhooks.startWorker();
        const connected = await connectPortal(services, p, { portalId, userId: portal.userId });
        assert.deepEqual(connected, { ok: true });
        const [first] = await receiver.waitFor(1);
        assert.equal(first!.event?.type, 'connection.connected');
        const started = Date.now();
        await services.partner.revokeConnection(portalId, {
          actor: { type: 'user', id: String(portal.userId) },
          reason: 'disconnect',
        });
        const [, second] = await receiver.waitFor(2, 5_000);
        assert.equal(second!.event?.type, 'connection.revoked');
        assert.equal(second!.event?.data.reason, 'disconnect');
        assert.ok(second!.at - started < 1_000, `took ${second!.at - started} ms`);
      });
    });
  }
});
