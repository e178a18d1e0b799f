/**
 * Deliveries at the message pace: a backlog of one endpoint is delivered over a few kept-alive
 * connections (at most its lanes), each event once and recorded, on both backends; and the
 * sender's pool of connections keeps the rules of one attempt (an answer read past its limit
 * is not reused; two endpoints on one host never share a connection).
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { systemResolver } from '../../src/webhooks/address-guard.ts';
import { GATE_SETTINGS } from '../../src/webhooks/delivery-gate.ts';
import { createAgentPool, sendWebhook } from '../../src/webhooks/webhook-sender.ts';
import { signDelivery } from '../../src/webhooks/webhook-signing.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { eventually, startReceiver } from './receiver.ts';

const EVENTS = 200;

describe('kept-alive deliveries', { concurrency: true }, () => {
  for (const backend of backends()) {
    test(`${EVENTS} events to one endpoint: each once, over at most its lanes' connections (${backend.name})`, async (t) => {
      const { services } = await buildTestApp(
        t,
        backend,
        {},
        {},
        {
          webhooks: { addressPolicy: 'development-any-address' },
        },
      );
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      await services.webhooks.start();
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      const { secret } = await services.webhooks.addEndpoint(
        portalId,
        { url: receiver.url, eventTypes: ['ticket.created'] },
        { actor: CLI_ACTOR },
      );
      receiver.secrets.push(secret);
      const createdAt = new Date().toISOString();
      await services.storage.db.transaction((tx) =>
        services.webhooks.emitMany(
          tx,
          portalId,
          'ticket.created',
          Array.from({ length: EVENTS }, (_, n) => ({
            ticketId: `tkt_many${n}`,
            priority: 'normal' as const,
            createdAt,
          })),
        ),
      );
      await services.webhooks.startWorker();
      const received = await receiver.waitFor(EVENTS, 60_000);
      assert.ok(
        received.every((r) => r.event !== null),
        'every delivery verifies with the reference library',
      );
      const tickets = new Set(received.map((r) => String(r.event?.data.ticketId)));
      assert.equal(tickets.size, EVENTS, 'each event delivered once');
      const deliveries = await eventually(
        async () => {
          const d = await services.webhooks.recentDeliveries(portalId, { limit: EVENTS });
          return d.length === EVENTS && d.every((x) => x.status === 'succeeded') && d;
        },
        30_000,
        'every delivery recorded succeeded',
      );
      assert.ok(deliveries.every((d) => d.attempts === 1 && d.lastStatusCode === 204));
      const connections = receiver.connections();
      t.diagnostic(`${EVENTS} deliveries over ${connections} connection(s)`);
      assert.ok(
        connections <= GATE_SETTINGS.perEndpoint,
        `at most ${GATE_SETTINGS.perEndpoint} connections (the endpoint's lanes), got ${connections}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(receiver.received.length, EVENTS, 'no delivery sent twice');
    });
  }

  test("an answer longer than the read limit closes its connection; two endpoints on one host don't share one", async (t) => {
    const stalled: ServerResponse[] = [];
    let connections = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/long') res.writeHead(200).end('x'.repeat(64 * 1024));
        else if (req.url === '/stall') stalled.push(res);
        else res.writeHead(204).end();
      });
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(async () => {
      for (const res of stalled) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const agents = createAgentPool({ socketsPerEndpoint: 1, maxEndpoints: 10, idleMs: 4_000 });
    t.after(() => agents.close());
    const settings = {
      policy: 'development-any-address' as const,
      resolver: systemResolver,
      timeoutMs: 5_000,
      agents,
    };
    const post = (path: string, endpointId: string, signal?: AbortSignal) =>
      sendWebhook(
        `${base}${path}`,
        '{}',
        signDelivery('evt_pool', new Date(), '{}', ['whsec_cG9vbHBvb2xwb29scG9vbA==']),
        settings,
        signal,
        endpointId,
      );

    // Answers read to their end: one connection for all of them.
    for (let i = 0; i < 5; i++) assert.equal((await post('/ok', 'ep_a')).statusCode, 204);
    assert.equal(connections, 1, 'an answer read to its end leaves its connection for the next');
    // Answers past the read limit: each one's connection is dropped, the next opens its own
    // (the first used the connection left by the answers above).
    for (let i = 0; i < 3; i++) assert.equal((await post('/long', 'ep_a')).statusCode, 200);
    assert.equal((await post('/ok', 'ep_a')).statusCode, 204);
    assert.equal(connections, 4, 'a connection whose answer was not read to its end is not reused');

    // Endpoint B's only socket hangs; endpoint A on the same host is answered meanwhile.
    const stop = new AbortController();
    const hanging = post('/stall', 'ep_b', stop.signal);
    await eventually(async () => stalled.length === 1, 5_000, 'the stalled request arrived');
    assert.equal((await post('/ok', 'ep_a')).statusCode, 204);
    stop.abort();
    assert.equal((await hanging).error, 'aborted');
  });
});
