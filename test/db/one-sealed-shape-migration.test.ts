/**
 * The provider token and the webhook signing secrets move from four text columns (ciphertext,
 * iv, tag, key id) into one jsonb `SealedValue`, without loss, on both backends: a database
 * migrated to the schema before holds an active connection (a token the sandbox provider
 * issued), a revoked one, and webhook endpoints with a secret, a secret mid-rotation and an
 * expired previous secret, all sealed under an old key. After the current migrations the token
 * reads through the real services (a Graph call with it answers), each endpoint signs a test
 * event with its secrets (verified by the Standard Webhooks reference library), each value is
 * the same ciphertext, iv, tag and key id repacked, the old columns are gone, and `keys rotate`
 * then `keys check` cover the moved values until the old key can go.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { runCommand } from '../../src/cli/commands.ts';
import { providerSettings } from '../../src/config.ts';
import type { ResealResult } from '../../src/db/sealing.ts';
import { ConnectionInactiveError } from '../../src/partner/connections-store.ts';
import { createProviderClient } from '../../src/partner/provider-client.ts';
import {
  createKeyring,
  generateKeyEntry,
  parseKeySpec,
  type SealedValue,
} from '../../src/platform/keyring.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createServices, type Services } from '../../src/services.ts';
import { newSigningSecret } from '../../src/webhooks/webhook-signing.ts';
import { testConfig } from '../helpers/app.ts';
import { migrateTo, migrationTargets, previousMigrations } from '../helpers/previous-schema.ts';
import { startTestProvider } from '../helpers/provider.ts';
import { queryRows } from '../helpers/sql.ts';
import { eventually, startReceiver } from '../webhooks/receiver.ts';

/** The last migration of the schema with four text columns per sealed token and secret. */
const PREVIOUS = '0024_one_message_table';
const OLD = 'oldk';
const PROVIDER_USER = '4242';
const HOUR = 3600 * 1000;
const FAST = {
  retryScheduleMs: [0, 50, 50],
  attemptTimeoutMs: 2_000,
  addressPolicy: 'development-any-address' as const,
};

for (const target of migrationTargets) {
  describe(`one sealed-value shape (${target.name})`, () => {
    test('tokens and webhook secrets read, sign and rotate after the migration', async (t) => {
      // Hooks run in the order added: the services stop before the storage closes.
      const started: Services[] = [];
      const stopAll = async () => {
        for (const services of started.splice(0)) await services.stop();
      };
      t.after(stopAll);
      const provider = await startTestProvider(t);
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      // A token as the sandbox provider issues it, exchanged over HTTP as the callback would.
      const client = createProviderClient(providerSettings(testConfig(provider.env))!);
      const code = provider.sandbox.authorize({
        appId: provider.appId,
        redirectUri: provider.redirectUri,
        userId: PROVIDER_USER,
      });
      const { accessToken } = await client.exchangeCode(code);

      const storage = await target.open(t);
      t.after(() => storage.close());
      await migrateTo(storage, previousMigrations(t, PREVIOUS));
      const oldKey = generateKeyEntry(OLD);
      const keyring = createKeyring(parseKeySpec(oldKey));
      const db = storage.db;
      const portalIds: number[] = [];
      for (const portalCode of ['710101', '710102']) {
        const [p] = await queryRows<{ id: number }>(
          storage,
          sql`insert into portals (portal_code, name) values (${portalCode}, 'Sealed') returning id`,
        );
        portalIds.push(p!.id);
      }
      const [portalId, revokedId] = portalIds as [number, number];

      // As the previous schema stored them: four text columns per value.
      const token = keyring.seal(accessToken, portalId);
      await db.execute(sql`insert into connections (portal_id, status, provider_user_id,
          token_ciphertext, token_iv, token_tag, key_id)
        values (${portalId}, 'active', ${PROVIDER_USER}, ${token.ciphertext}, ${token.iv},
          ${token.tag}, ${token.keyId})`);
      await db.execute(sql`insert into connections (portal_id, status, revoked_at, revoke_reason)
        values (${revokedId}, 'inactive', now(), 'disconnected')`);
      const secrets = {
        plain: newSigningSecret(),
        current: newSigningSecret(),
        previous: newSigningSecret(),
        expiredCurrent: newSigningSecret(),
        expired: newSigningSecret(),
      };
      const sealed = Object.fromEntries(
        Object.entries(secrets).map(([k, v]) => [k, keyring.seal(v, portalId, 'webhook-secret')]),
      ) as Record<keyof typeof secrets, SealedValue>;
      const endpoint = async (
        id: string,
        secret: SealedValue,
        previous?: { sealed: SealedValue; until: Date },
      ) =>
        db.execute(sql`insert into webhook_endpoints (id, portal_id, url, event_types,
            secret_ciphertext, secret_iv, secret_tag, secret_key_id, previous_secret_ciphertext,
            previous_secret_iv, previous_secret_tag, previous_secret_key_id,
            previous_secret_expires_at)
          values (${id}, ${portalId}, ${receiver.url}, array['ticket.created'],
            ${secret.ciphertext}, ${secret.iv}, ${secret.tag}, ${secret.keyId},
            ${previous?.sealed.ciphertext ?? null}, ${previous?.sealed.iv ?? null},
            ${previous?.sealed.tag ?? null}, ${previous?.sealed.keyId ?? null},
            ${previous?.until.toISOString() ?? null})`);
      await endpoint('ep_plain', sealed.plain);
      await endpoint('ep_rotating', sealed.current, {
        sealed: sealed.previous,
        until: new Date(Date.now() + 12 * HOUR),
      });
      await endpoint('ep_rotated', sealed.expiredCurrent, {
        sealed: sealed.expired,
        until: new Date(Date.now() - HOUR),
      });

      await storage.migrate();

      // Each value is the same ciphertext, iv, tag and key id, in one jsonb column.
      const tokens = await queryRows<{ portal_id: number; token: SealedValue | null }>(
        storage,
        sql`select portal_id, token from connections order by portal_id`,
      );
      assert.deepEqual(tokens, [
        { portal_id: portalId, token },
        { portal_id: revokedId, token: null },
      ]);
      const endpoints = await queryRows<{
        id: string;
        secret: SealedValue;
        previous_secret: SealedValue | null;
      }>(storage, sql`select id, secret, previous_secret from webhook_endpoints order by id`);
      assert.deepEqual(endpoints, [
        { id: 'ep_plain', secret: sealed.plain, previous_secret: null },
        { id: 'ep_rotated', secret: sealed.expiredCurrent, previous_secret: sealed.expired },
        { id: 'ep_rotating', secret: sealed.current, previous_secret: sealed.previous },
      ]);
      const columns = await queryRows<{ name: string }>(
        storage,
        sql`select table_name || '.' || column_name as name from information_schema.columns
            where table_name in ('connections', 'webhook_endpoints')
              and (column_name like '%ciphertext' or column_name like '%\_iv'
                or column_name like '%\_tag' or column_name like '%key\_id')`,
      );
      assert.deepEqual(columns, [], 'the four-column shape is gone');

      const withKeys = (keys: string) => {
        const services = createServices({
          config: testConfig({ ...provider.env, TOKEN_ENCRYPTION_KEYS: keys }),
          storage,
          logger: createLogger('silent'),
          overrides: { webhooks: FAST },
        });
        started.push(services);
        return services;
      };
      const services = withKeys(oldKey);
      // The token opens through the partner service and the provider accepts it.
      assert.equal((await services.partner.fetchProviderProfile(portalId)).id, PROVIDER_USER);
      assert.equal((await services.partner.connectionSummary(revokedId)).status, 'inactive');
      await assert.rejects(
        services.partner.fetchProviderProfile(revokedId),
        ConnectionInactiveError,
      );

      // Every live secret signs: the current one alone, or both during a rotation's overlap.
      await services.webhooks.start();
      await services.webhooks.startWorker();
      receiver.secrets.push(secrets.plain, secrets.current, secrets.expiredCurrent);
      const signers = async (n: number, endpointId: string) => {
        await services.webhooks.sendTestEvent(portalId, endpointId);
        const got = (await receiver.waitFor(n))[n - 1]!;
        assert.ok(got.event, `${endpointId} signs with its current secret`);
        return Object.entries(secrets)
          .filter(([, secret]) => {
            try {
              new Webhook(secret).verify(got.body, got.headers as Record<string, string>);
              return true;
            } catch {
              return false;
            }
          })
          .map(([name]) => name);
      };
      assert.deepEqual(await signers(1, 'ep_plain'), ['plain']);
      assert.deepEqual(await signers(2, 'ep_rotating'), ['current', 'previous']);
      assert.deepEqual(await signers(3, 'ep_rotated'), ['expiredCurrent']);
      // Stopped once each delivery is recorded, so none is attempted again.
      await eventually(async () => {
        const deliveries = await services.webhooks.recentDeliveries(portalId);
        return deliveries.length === 3 && deliveries.every((d) => d.status === 'succeeded');
      });
      await services.stop();

      // `keys rotate` and `keys check` cover the moved values.
      const newKey = generateKeyEntry('newk');
      const both = withKeys(`${newKey},${oldKey}`);
      const before = (await runCommand(both, 'keys check', {})) as {
        uses: { column: string; keyId: string; rows: number }[];
      };
      const under = (column: string) =>
        before.uses.filter((u) => u.column === column).map((u) => [u.keyId, u.rows]);
      assert.deepEqual(under('connections.token'), [[OLD, 1]]);
      assert.deepEqual(under('webhook_endpoints.secret'), [[OLD, 3]]);
      // The expired previous secret is never opened again: not counted, not re-sealed.
      assert.deepEqual(under('webhook_endpoints.previous_secret'), [[OLD, 1]]);
      const rotated = (await runCommand(both, 'keys rotate', {})) as ResealResult;
      const resealed = (column: string) =>
        rotated.columns.find((c) => c.column === column)?.resealed;
      assert.equal(resealed('connections.token'), 1);
      assert.equal(resealed('webhook_endpoints.secret'), 3);
      assert.equal(resealed('webhook_endpoints.previous_secret'), 1);
      assert.equal(rotated.remaining, 0);
      const after = (await runCommand(both, 'keys check', {})) as {
        removable: string[];
        remaining: number;
      };
      assert.deepEqual([after.removable, after.remaining], [[OLD], 0]);

      const onlyNew = withKeys(newKey);
      await onlyNew.start();
      assert.equal((await onlyNew.partner.fetchProviderProfile(portalId)).id, PROVIDER_USER);
      receiver.secrets.splice(0);
      receiver.secrets.push(secrets.current);
      await onlyNew.webhooks.sendTestEvent(portalId, 'ep_rotating');
      const [, , , last] = await receiver.waitFor(4);
      assert.ok(last!.event, 'the re-sealed secret signs with only the new key listed');
      assert.equal(String(last!.headers['webhook-signature']).split(' ').length, 2);
      await stopAll();
    });
  });
}
