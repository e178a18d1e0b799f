import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { generateApiToken } from '../../src/accounts/api-token.ts';
import { listAuditEvents } from '../../src/audit/audit-log.ts';
import type { Services } from '../../src/services.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

const TICKETS = '/api/v1/external/support/tickets';

/** Every row of the tables a ticket touches, as one string. */
async function storedText(services: Services): Promise<string> {
  const parts: unknown[] = [];
  for (const table of ['support_tickets', 'idempotency_keys', 'audit_events']) {
    const result: unknown = await services.storage.db.execute(
      sql.raw(`select row_to_json(t)::text as j from ${table} t`),
    );
    parts.push(...(result as { rows: { j: string }[] }).rows.map((r) => r.j));
  }
  return parts.join('\n');
}

for (const backend of backends()) {
  describe(`secret scanning of tickets (${backend.name})`, () => {
    test('a real API token and the provider app secret are redacted, stored and logged nowhere', async (t) => {
      const appSecret = `appsecret${randomBytes(16).toString('hex')}`;
      const { app, services, logs } = await buildTestApp(t, backend, {
        PROVIDER_APP_SECRET: appSecret,
        LOG_LEVEL: 'trace',
      });
      const portal = await createPortal(services);
      const other = await createPortal(services);
      // The same request twice: the replay must not bring a secret back either.
      const post = () =>
        app.inject({
          method: 'POST',
          url: TICKETS,
          headers: { authorization: portal.token, 'idempotency-key': 'leak-1' },
          payload: {
            subject: `My token is ${portal.token}`,
            description:
              `Config: PROVIDER_APP_SECRET=${appSecret}\n` +
              `and a colleague's token (${other.token}) and mine again:${portal.token}.`,
          },
        });
      const res = await post();
      assert.equal(res.statusCode, 201);
      const ticket = res.json().data;
      assert.equal(ticket.secretRedacted, true);
      assert.equal(ticket.subject, 'My token is [REDACTED]');
      assert.equal(
        ticket.description,
        "Config: PROVIDER_APP_SECRET=[REDACTED]\nand a colleague's token ([REDACTED]) and mine again:[REDACTED].",
      );

      const replay = await post();
      assert.equal(replay.headers['idempotent-replayed'], 'true');

      const stored = await storedText(services);
      assert.ok(stored.includes(ticket.id), 'the ticket was stored');
      for (const secret of [portal.token, other.token, appSecret]) {
        assert.ok(!stored.includes(secret), 'no secret in any stored row');
        assert.ok(!stored.includes(secret.slice(4, 30)), 'not even a part of it');
        for (const line of logs) assert.ok(!line.includes(secret.slice(4, 30)), line);
      }
      assert.ok(logs.some((l) => l.includes('rotate the provider app secret')));

      // Audit: this portal is told to regenerate its token and the operator to rotate the
      // secret; the other portal is told to regenerate its own.
      const mine = await listAuditEvents(services.storage.db, portal.portalId);
      const redactions = mine.filter((e) => e.action === 'secret.redacted');
      assert.equal(redactions.length, 3);
      for (const e of redactions) {
        assert.equal(e.actorType, 'user');
        assert.equal(e.actorId, String(portal.userId));
        assert.ok(e.reason?.includes(ticket.id));
      }
      assert.ok(redactions.some((e) => /regenerate it now/.test(e.reason ?? '')));
      assert.ok(redactions.some((e) => /rotate the app secret/.test(e.reason ?? '')));
      assert.ok(redactions.some((e) => /another portal/.test(e.reason ?? '')));
      const theirs = (await listAuditEvents(services.storage.db, other.portalId)).filter(
        (e) => e.action === 'secret.redacted',
      );
      assert.equal(theirs.length, 1);
      assert.match(theirs[0]!.reason ?? '', /regenerate it now/);
      assert.ok(!(theirs[0]!.reason ?? '').includes(ticket.id), 'no cross-portal ticket id');
    });

    test('category, tags and the Idempotency-Key are scanned too: nothing stored in clear', async (t) => {
      const appSecret = `appsecret${randomBytes(16).toString('hex')}`;
      const { app, services, logs } = await buildTestApp(t, backend, {
        PROVIDER_APP_SECRET: appSecret,
      });
      const portal = await createPortal(services);
      const other = await createPortal(services);
      const third = await createPortal(services);
      const key = `retry-${third.token}`;
      const post = (idempotencyKey: string) =>
        app.inject({
          method: 'POST',
          url: TICKETS,
          headers: { authorization: portal.token, 'idempotency-key': idempotencyKey },
          payload: {
            subject: 'clean subject',
            description: 'clean description',
            category: `billing ${other.token}`,
            // A tag is at most 50 characters: a token (53) cannot fit, the app secret can.
            tags: ['ok', `secret=${appSecret}`],
          },
        });
      const res = await post(key);
      assert.equal(res.statusCode, 201, res.body);
      const ticket = res.json().data;
      assert.equal(ticket.secretRedacted, true);
      assert.equal(ticket.category, 'billing [REDACTED]');
      assert.deepEqual(ticket.tags, ['ok', 'secret=[REDACTED]']);

      // The same key (secret and all) replays; another key is another request.
      const replay = await post(key);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.json().data.id, ticket.id);
      const otherKey = await post(`retry-${other.token}`);
      assert.equal(otherKey.statusCode, 201);
      assert.notEqual(otherKey.json().data.id, ticket.id);

      const stored = await storedText(services);
      for (const secret of [portal.token, other.token, third.token, appSecret]) {
        assert.ok(!stored.includes(secret.slice(4, 30)), 'no secret in any stored row');
        for (const line of logs) assert.ok(!line.includes(secret.slice(4, 30)), line);
      }
      // Each portal whose token leaked is told, the key's token included.
      for (const owner of [other, third]) {
        const told = (await listAuditEvents(services.storage.db, owner.portalId)).filter(
          (e) => e.action === 'secret.redacted',
        );
        assert.ok(told.length >= 1, `portal ${owner.portalCode} is told to regenerate`);
      }
      const mine = (await listAuditEvents(services.storage.db, portal.portalId)).filter(
        (e) => e.action === 'secret.redacted' && e.reason?.includes(ticket.id),
      );
      assert.equal(mine.length, 3, 'two other portals (category, key), the app secret (tag)');
    });

    test('look-alikes are kept; nothing is flagged without a secret', async (t) => {
      const { app, services } = await buildTestApp(t, backend, {
        PROVIDER_APP_SECRET: 'the-provider-secret-value',
      });
      const { token } = await createPortal(services);
      const real = generateApiToken();
      const badChecksum = real.slice(0, -1) + (real.endsWith('a') ? 'b' : 'a');
      const res = await app.inject({
        method: 'POST',
        url: TICKETS,
        headers: { authorization: token },
        payload: {
          subject: 'ptk_ is our token prefix',
          description: `Not a token: ${badChecksum}; not the secret: the-provider-secret-valu`,
        },
      });
      assert.equal(res.statusCode, 201);
      assert.equal(res.json().data.secretRedacted, false);
      assert.ok(res.json().data.description.includes(badChecksum));

      // A well-formed token that belongs to nobody is still redacted (it looks live to anyone
      // reading the ticket) and recorded.
      const orphan = await app.inject({
        method: 'POST',
        url: TICKETS,
        headers: { authorization: token },
        payload: { subject: 'orphan', description: `old token ${real}` },
      });
      assert.equal(orphan.json().data.description, 'old token [REDACTED]');
      assert.equal(orphan.json().data.secretRedacted, true);
    });
  });
}
