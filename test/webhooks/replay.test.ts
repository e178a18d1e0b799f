import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { updateEndpoint } from '../../src/webhooks/webhooks-repository.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { deadline } from '../helpers/deadlines.ts';
import { backends } from '../helpers/storage.ts';
import { eventually, startReceiver } from './receiver.ts';

interface Replay {
  id: string;
  eventCount: number;
  status: string;
  progress: { pending: number; succeeded: number; failed: number };
  criteria: { failedOnly: boolean; types: string[] };
}

describe('replays', { concurrency: true }, () => {
  for (const backend of backends()) {
    describe(`replays (${backend.name})`, { concurrency: 1 }, () => {
      test('replay with and without failed-only to a receiver that verifies and deduplicates by webhook-id', async (t) => {
        const { app, services } = await buildTestApp(
          t,
          backend,
          { WEBHOOK_REPLAY_PER_SECOND: '20' },
          {},
          {
            webhooks: {
              retryScheduleMs: [0, 30],
              attemptTimeoutMs: 2_000,
              addressPolicy: 'development-any-address',
            },
          },
        );
        // The receiver verifies each signature (the reference library) and processes a
        // webhook-id once; while `down` it answers 503.
        let down = false;
        const processed = new Map<string, number>();
        const receiver = await startReceiver(() => (down ? 503 : 204));
        t.after(() => receiver.close());
        await services.webhooks.start();
        const portal = await createPortal(services);
        const portalId = await services.accounts.portalIdFor(portal.portalCode);
        const { secret, endpoint } = await services.webhooks.addEndpoint(
          portalId,
          { url: receiver.url, eventTypes: ['ticket.created'] },
          { actor: CLI_ACTOR },
        );
        receiver.secrets.push(secret);
        await services.webhooks.startWorker();
        const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
          app.inject({
            method,
            url: `/api/v1/external${url}`,
            headers: { authorization: portal.token },
            ...(payload && { payload }),
          });
        const since = new Date(Date.now() - 1000).toISOString();
        const ticket = async (subject: string) => {
          const res = await api('POST', '/support/tickets', { subject, description: 'x' });
          assert.equal(res.statusCode, 201);
          return res.json<{ data: { id: string } }>().data.id;
        };
        const deduplicate = () => {
          for (const r of receiver.received) {
            if (!r.event || down) continue;
            const id = String(r.headers['webhook-id']);
            processed.set(id, (processed.get(id) ?? 0) + 1);
          }
        };

        await ticket('one');
        await ticket('two');
        await receiver.waitFor(2);
        down = true;
        await ticket('three');
        await ticket('four');
        await ticket('five');
        // 2 delivered, 3 failed after their two attempts.
        await eventually(async () => {
          const page = await api(
            'GET',
            `/webhooks/endpoints/${endpoint.id}/deliveries?status=failed`,
          );
          return page.json<{ data: { items: unknown[] } }>().data.items.length === 3;
        });
        const failedPage = (
          await api('GET', `/webhooks/endpoints/${endpoint.id}/deliveries?status=failed&limit=2`)
        ).json<{ data: { items: { eventId: string }[]; nextCursor: string } }>().data;
        const secondPage = (
          await api(
            'GET',
            `/webhooks/endpoints/${endpoint.id}/deliveries?status=failed&limit=2&cursor=${failedPage.nextCursor}`,
          )
        ).json<{ data: { items: { eventId: string }[]; nextCursor: null } }>().data;
        // Filtered by type as well: the failed ticket.created deliveries, none of another type.
        const failedOfType = async (types: string) =>
          (
            await api(
              'GET',
              `/webhooks/endpoints/${endpoint.id}/deliveries?status=failed&types=${types}`,
            )
          ).json<{ data: { items: unknown[] } }>().data.items.length;
        assert.equal(await failedOfType('ticket.created'), 3);
        assert.equal(await failedOfType('message.status'), 0);
        const failedEvents = [...failedPage.items, ...secondPage.items].map((d) => d.eventId);
        assert.equal(new Set(failedEvents).size, 3);
        assert.equal(secondPage.nextCursor, null);
        const before = receiver.received.length;
        receiver.received.splice(0);
        down = false;
        assert.equal(before, 2 + 3 * 2);

        // A replay takes the events below the log's horizon (decision 38): wait until every
        // transaction older than the five has ended anywhere on the database server (the other
        // tests' included).
        await eventually(async () => {
          const res = await api('GET', '/events?types=ticket.created');
          return res.json<{ data: { items: unknown[] } }>().data.items.length === 5;
        }, deadline(30_000));

        // Failed only: exactly the three that never arrived, with their original webhook-id.
        const replayed = await api('POST', `/webhooks/endpoints/${endpoint.id}/replay`, {
          since,
          failedOnly: true,
        });
        assert.equal(replayed.statusCode, 202, replayed.body);
        const replay = replayed.json<{ data: Replay }>().data;
        assert.equal(replay.eventCount, 3);
        assert.deepEqual(replay.criteria.types, ['ticket.created']);
        const got = await receiver.waitFor(3);
        assert.ok(
          got.every((r) => r.event !== null),
          'every replayed delivery verifies',
        );
        assert.deepEqual(
          got.map((r) => String(r.headers['webhook-id'])).sort(),
          [...failedEvents].sort(),
        );
        const finished = await eventually(async () => {
          const res = await api('GET', `/webhooks/endpoints/${endpoint.id}/replays/${replay.id}`);
          const r = res.json<{ data: Replay }>().data;
          return r.status === 'finished' && r;
        });
        assert.deepEqual(finished.progress, { pending: 0, succeeded: 3, failed: 0 });
        deduplicate();
        assert.equal(processed.size, 3);

        // A second failed-only replay finds nothing left to send.
        const none = await api('POST', `/webhooks/endpoints/${endpoint.id}/replay`, {
          since,
          failedOnly: true,
        });
        assert.equal(none.json<{ data: Replay }>().data.eventCount, 0);

        // Everything, by cursor range from the start of the log: all five again, in order; the
        // deduplicating receiver processes nothing twice.
        const log = (await api('GET', '/events?types=ticket.created')).json<{
          data: { items: { id: string; cursor: string }[] };
        }>().data.items;
        assert.equal(log.length, 5);
        receiver.received.splice(0);
        processed.clear();
        for (const id of failedEvents) processed.set(id, 1);
        const replayAsked = Date.now();
        const all = await api('POST', `/webhooks/endpoints/${endpoint.id}/replay`, {
          after: Buffer.from('0.0').toString('base64url'),
        });
        assert.equal(all.statusCode, 202, all.body);
        assert.equal(all.json<{ data: Replay }>().data.eventCount, 5);
        const again = await receiver.waitFor(5);
        assert.ok(again.every((r) => r.event !== null));
        // Queued oldest first; a worker runs a few attempts at once, so arrival may interleave.
        assert.deepEqual(
          again.map((r) => String(r.headers['webhook-id'])).sort(),
          log.map((e) => e.id).sort(),
        );
        const firstSeen = new Set(processed.keys());
        deduplicate();
        assert.equal(processed.size, 5, 'five distinct events');
        assert.ok(
          [...firstSeen].every((id) => processed.get(id) === 2),
          'the three failed ones came again and were recognised as duplicates',
        );
        // Paced at 20 a second: the five were due 50 ms apart from a moment after the request
        // began, so the last cannot arrive before 200 ms after it (a lower bound: a busy
        // machine only delays them further).
        const lastArrival = Math.max(...again.map((r) => r.at));
        assert.ok(
          lastArrival - replayAsked >= 4 * 50,
          `last after ${lastArrival - replayAsked} ms`,
        );
        const history = (
          await api('GET', `/webhooks/endpoints/${endpoint.id}/deliveries?limit=5`)
        ).json<{ data: { items: { replayId: string | null; createdAt: string }[] } }>().data;
        assert.ok(history.items.every((d) => d.replayId !== null));
      });

      test('refusals: bad range, unsubscribed type, unknown endpoint, disabled endpoint', async (t) => {
        const { app, services } = await buildTestApp(t, backend);
        await services.webhooks.start();
        const portal = await createPortal(services);
        const portalId = await services.accounts.portalIdFor(portal.portalCode);
        const other = await createPortal(services);
        const otherId = await services.accounts.portalIdFor(other.portalCode);
        const { endpoint } = await services.webhooks.addEndpoint(
          portalId,
          { url: 'http://127.0.0.1:9/hooks', eventTypes: ['ticket.created'] },
          { actor: CLI_ACTOR },
        );
        const { endpoint: foreign } = await services.webhooks.addEndpoint(
          otherId,
          { url: 'http://127.0.0.1:9/hooks', eventTypes: ['ticket.created'] },
          { actor: CLI_ACTOR },
        );
        const replay = (id: string, payload: object) =>
          app.inject({
            method: 'POST',
            url: `/api/v1/external/webhooks/endpoints/${id}/replay`,
            headers: { authorization: portal.token },
            payload,
          });
        const since = new Date().toISOString();
        const cases: [object, string][] = [
          [{}, 'body.range'],
          [{ since, after: 'MC4w' }, 'body.range'],
          [{ since, upTo: 'MC4w' }, 'body.upTo'],
          [{ since, until: since }, 'body.until'],
          [{ after: 'garbage!' }, 'body.after'],
          [{ since, types: ['credit.low'] }, 'body.types'],
        ];
        for (const [payload, field] of cases) {
          const res = await replay(endpoint.id, payload);
          assert.equal(res.statusCode, 400, JSON.stringify(payload));
          const body = res.json<{ error: { code: string; details: { field: string }[] } }>();
          assert.equal(body.error.code, 'invalid_request');
          assert.equal(body.error.details[0]!.field, field, JSON.stringify(payload));
        }
        assert.equal((await replay(foreign.id, { since })).statusCode, 404);
        assert.equal((await replay('ep_nope', { since })).statusCode, 404);
        const history = await app.inject({
          method: 'GET',
          url: `/api/v1/external/webhooks/endpoints/${foreign.id}/deliveries`,
          headers: { authorization: portal.token },
        });
        assert.equal(history.statusCode, 404);
        await updateEndpoint(services.storage.db, portalId, endpoint.id, { enabled: false });
        const disabled = await replay(endpoint.id, { since });
        assert.equal(disabled.statusCode, 409);
      });
    });
  }
});
