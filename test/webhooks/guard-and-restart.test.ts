import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { openStorage, type Storage, type StorageTarget } from '../../src/db/client.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createServices, type ServiceOverrides } from '../../src/services.ts';
import { createPortal, testConfig } from '../helpers/app.ts';
import { backends, createPostgresDatabase } from '../helpers/storage.ts';
import { eventually, startReceiver } from './receiver.ts';

const FAST = { retryScheduleMs: [0, 50], attemptTimeoutMs: 2_000 };

/** A storage that can be closed and opened again, as a killed and restarted instance would. */
async function durableTarget(
  kind: string,
): Promise<{ target: StorageTarget; drop: () => Promise<void> }> {
  if (kind === 'postgres') {
    const { url, drop } = await createPostgresDatabase();
    return { target: { kind: 'postgres', url, poolSize: 5 }, drop };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-wh-'));
  return { target: { kind: 'pglite', dataDir }, drop: async () => {} };
}

/** One config (so one DATA_DIR, one keyring) for every instance of a test file. */
const config = testConfig();

function servicesOver(storage: Storage, overrides: ServiceOverrides) {
  return createServices({
    config,
    storage,
    logger: createLogger('silent'),
    overrides,
  });
}

for (const backend of backends()) {
  describe(`webhook guard and durability (${backend.name})`, () => {
    test('NODE_ENV=production with no override refuses metadata and private addresses', async (t) => {
      const storage = await backend.open();
      const production = testConfig({
        NODE_ENV: 'production',
        APP_BASE_URL: 'https://portico.example.com',
        TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
        PROVIDER_APP_ID: '1234567890',
        PROVIDER_APP_SECRET: 'a-real-provider-app-secret-0123456789',
        PROVIDER_REDIRECT_URI: 'https://portico.example.com/api/auth/partner/callback',
        PROVIDER_WEBHOOK_VERIFY_TOKEN: 'a-webhook-verify-token-0123',
        PROVIDER_HEALTH_CHECK_INTERVAL_MS: '0',
      });
      const prod = createServices({ config: production, storage, logger: createLogger('silent') });
      t.after(async () => {
        await prod.jobs.stop();
        await storage.close();
      });
      const portal = await createPortal(prod);
      const portalId = await prod.accounts.portalIdFor(portal.portalCode);
      for (const url of [
        'https://169.254.169.254/latest/meta-data/',
        'https://10.0.0.5/hooks',
        'https://192.168.1.20/hooks',
        'https://127.0.0.1/hooks',
        'https://[::1]/hooks',
      ]) {
        await assert.rejects(
          prod.webhooks.addEndpoint(
            portalId,
            { url, eventTypes: ['ticket.created'] },
            {
              actor: CLI_ACTOR,
            },
          ),
          (err: { code?: string }) => err.code === 'invalid_request',
          url,
        );
      }
    });

    test('production refuses the metadata address and a name resolving to 127.0.0.1', async (t) => {
      const storage = await backend.open();
      const receiver = await startReceiver();
      const dev = servicesOver(storage, {
        webhooks: { ...FAST, addressPolicy: 'development-any-address' },
      });
      // Production, with a DNS answer that points a public-looking name at loopback.
      const prod = servicesOver(storage, {
        webhooks: {
          ...FAST,
          addressPolicy: 'public-only',
          resolver: async () => [{ address: '127.0.0.1', family: 4 }],
        },
      });
      t.after(async () => {
        await prod.webhooks.stopWorker();
        await prod.jobs.stop();
        await dev.jobs.stop();
        await receiver.close();
        await storage.close();
      });
      const portal = await createPortal(dev);
      const portalId = await dev.accounts.portalIdFor(portal.portalCode);
      const ctx = { actor: CLI_ACTOR };
      for (const url of ['http://169.254.169.254/', 'https://169.254.169.254/latest/meta-data/']) {
        await assert.rejects(
          prod.webhooks.addEndpoint(portalId, { url, eventTypes: ['ticket.created'] }, ctx),
          (err: { code?: string }) => err.code === 'invalid_request',
        );
      }
      // Saved while it looked fine (or under development), refused when delivered.
      const metadata = await dev.webhooks.addEndpoint(
        portalId,
        { url: 'https://169.254.169.254/', eventTypes: ['ticket.created'] },
        ctx,
      );
      const rebinding = await prod.webhooks.addEndpoint(
        portalId,
        {
          url: `https://hooks.example.com:${new URL(receiver.url).port}/`,
          eventTypes: ['ticket.created'],
        },
        ctx,
      );
      const localhost = await dev.webhooks.addEndpoint(
        portalId,
        { url: receiver.url.replace('127.0.0.1', 'localhost'), eventTypes: ['ticket.created'] },
        ctx,
      );
      await prod.webhooks.start();
      await prod.webhooks.startWorker();
      for (const e of [metadata, rebinding, localhost]) {
        await prod.webhooks.sendTestEvent(portalId, e.endpoint.id);
      }
      const deliveries = await eventually(async () => {
        const d = await prod.webhooks.recentDeliveries(portalId);
        return d.length === 3 && d.every((x) => x.status === 'failed') && d;
      });
      for (const d of deliveries) {
        assert.match(d.lastError ?? '', /^refused address/);
        assert.equal(d.lastStatusCode, null);
      }
      assert.equal(receiver.received.length, 0, 'nothing reached the loopback receiver');
    });

    test('an instance killed between the change and the delivery loses nothing', async (t) => {
      const { target, drop } = await durableTarget(backend.name);
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      const overrides = {
        webhooks: { ...FAST, addressPolicy: 'development-any-address' as const },
      };
      // Instance 1: the change commits (with its job), then the instance is gone before any
      // worker ran.
      let storage = await openStorage(target);
      await storage.migrate();
      let services = servicesOver(storage, overrides);
      await services.webhooks.start();
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      const { secret } = await services.webhooks.addEndpoint(
        portalId,
        { url: receiver.url, eventTypes: ['contact.opted_out'] },
        { actor: CLI_ACTOR },
      );
      receiver.secrets.push(secret);
      const contact = await services.contacts.createContact({
        principal: { portalId },
        input: { phone: '+14155550199', consent: { whatsapp: 'opted_in' } },
      });
      await services.contacts.patchContact({ portalId }, contact.body.data.id, {
        consent: { whatsapp: 'opted_out' },
      });
      const queued = await services.webhooks.recentDeliveries(portalId);
      assert.equal(queued.length, 1, 'the delivery committed with the opt-out');
      await services.jobs.stop();
      await storage.close();
      assert.equal(receiver.received.length, 0);

      // Instance 2 over the same database: the queued event is delivered.
      storage = await openStorage(target);
      await storage.migrate();
      services = servicesOver(storage, overrides);
      t.after(async () => {
        await services.webhooks.stopWorker();
        await services.jobs.stop();
        await storage.close();
        // Only after the pool is closed: dropping ends its connections.
        await drop();
      });
      await services.webhooks.startWorker();
      const [got] = await receiver.waitFor(1);
      assert.equal(got!.event?.type, 'contact.opted_out');
      assert.equal(got!.event?.data.contactId, contact.body.data.id);
    });

    test('a stop during a hanging delivery ends at once; the delivery is retried after restart', async (t) => {
      const { target, drop } = await durableTarget(backend.name);
      // The first attempt hangs (the production 15 s timeout applies); later ones are answered.
      const receiver = await startReceiver((n) => (n === 1 ? 'stall' : 204));
      t.after(() => receiver.close());
      const overrides = { webhooks: { addressPolicy: 'development-any-address' as const } };
      let storage = await openStorage(target);
      await storage.migrate();
      let services = servicesOver(storage, overrides);
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
      await services.webhooks.sendTestEvent(portalId, endpoint.id);
      const [hung] = await receiver.waitFor(1);
      const started = Date.now();
      await services.stop();
      const stopMs = Date.now() - started;
      await storage.close();
      // Well inside SHUTDOWN_TIMEOUT_MS (10 s), which the 15 s attempt used to overrun.
      assert.ok(stopMs < 5_000, `stopped in ${stopMs} ms`);
      const config = testConfig();
      assert.ok(stopMs < config.SHUTDOWN_TIMEOUT_MS);

      storage = await openStorage(target);
      await storage.migrate();
      services = servicesOver(storage, overrides);
      t.after(async () => {
        await services.stop();
        await storage.close();
        await drop();
      });
      await services.webhooks.startWorker();
      const [, retried] = await receiver.waitFor(2);
      assert.equal(retried!.headers['webhook-id'], hung!.headers['webhook-id']);
      const [delivery] = await eventually(async () => {
        const d = await services.webhooks.recentDeliveries(portalId);
        return d[0]?.status === 'succeeded' && d;
      });
      assert.equal(delivery!.attempts, 1, 'the aborted attempt was not counted');
    });
  });
}
