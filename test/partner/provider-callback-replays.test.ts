/**
 * Provider callbacks that arrive again or late (docs/decisions/0012-provider-callbacks.md,
 * docs/security.md invariant 7): a deauthorize signed before the current connection was made never
 * revokes it; a processed signed_request is remembered while fresh, so a retry or a replay is
 * answered like the first time and changes nothing; a data-deletion replay, and any request of
 * the same person while one is open, answers with the same confirmation code.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { sql } from 'drizzle-orm';
import { listAuditEvents } from '../../src/audit/audit-log.ts';
import { dataDeletionRequests } from '../../src/db/schema/index.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { connectPortal, startTestProvider } from '../helpers/provider.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends, type Backend } from '../helpers/storage.ts';

const PROVIDER_USER = '100088';
const DEAUTHORIZE = '/api/auth/partner/deauthorize';
const DATA_DELETION = '/api/auth/partner/data-deletion';

async function connected(t: TestContext, backend: Backend) {
  const p = await startTestProvider(t);
  const { app, services } = await buildTestApp(t, backend, p.env);
  const portal = await createPortal(services);
  const portalId = await services.accounts.portalIdFor(portal.portalCode);
  const connect = async () =>
    assert.deepEqual(
      await connectPortal(services, p, {
        portalId,
        userId: portal.userId,
        providerUserId: PROVIDER_USER,
      }),
      { ok: true },
    );
  await connect();
  const post = (url: string, signedRequest: string) =>
    app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ signed_request: signedRequest }).toString(),
    });
  const status = async () => (await services.partner.connectionSummary(portalId)).status;
  const events = async (action: string) =>
    (await listAuditEvents(services.storage.db, portalId)).filter((e) => e.action === action);
  return { p, app, services, portalId, connect, post, status, events };
}

for (const backend of backends()) {
  describe(`provider callback replays (${backend.name})`, () => {
    test('a deauthorize signed before the connection was made is refused and audited as ignored', async (t) => {
      const c = await connected(t, backend);
      // Signed two minutes ago (well within the freshness window), i.e. before the connection.
      c.p.sandbox.advanceTime(-120_000);
      const early = c.p.sandbox.signedRequestFor(c.p.appId, PROVIDER_USER);
      c.p.sandbox.advanceTime(120_000);

      const res = await c.post(DEAUTHORIZE, early);
      assert.equal(res.statusCode, 200);
      assert.equal(await c.status(), 'active', 'the later connection stays');
      assert.equal((await c.events('connection.revoked')).length, 0);
      const ignored = await c.events('provider_callback.ignored');
      assert.equal(ignored.length, 1);
      assert.equal(ignored[0]?.actorType, 'provider');
      assert.match(ignored[0]?.reason ?? '', /signed before the current connection/);

      // A deauthorize signed now still revokes.
      const now = await c.post(DEAUTHORIZE, c.p.sandbox.signedRequestFor(c.p.appId, PROVIDER_USER));
      assert.equal(now.statusCode, 200);
      assert.equal(await c.status(), 'inactive');
    });

    test('a replayed deauthorize is answered alike and never cuts off a reconnection', async (t) => {
      const c = await connected(t, backend);
      const signed = c.p.sandbox.signedRequestFor(c.p.appId, PROVIDER_USER);
      assert.equal((await c.post(DEAUTHORIZE, signed)).statusCode, 200);
      assert.equal(await c.status(), 'inactive');

      // The person connects again within the same second; the provider (or anyone who saw the
      // request) sends the same signed_request again.
      await c.connect();
      assert.equal(await c.status(), 'active');
      const replay = await c.post(DEAUTHORIZE, signed);
      assert.equal(replay.statusCode, 200);
      assert.deepEqual(replay.json(), { success: true });
      assert.equal(await c.status(), 'active', 'the replay changed nothing');
      assert.equal((await c.events('connection.revoked')).length, 1);

      // What is remembered holds no signed_request, only its fingerprint.
      const rows = await queryRows(
        c.services.storage,
        sql`select row_to_json(r)::text as j from processed_signed_requests r`,
      );
      assert.equal(rows.length, 1);
      assert.ok(!JSON.stringify(rows).includes(signed.split('.')[0]!));
    });

    test('a replayed data deletion returns the same confirmation code and one request', async (t) => {
      const c = await connected(t, backend);
      const signed = c.p.sandbox.signedRequestFor(c.p.appId, PROVIDER_USER);
      const first = await c.post(DATA_DELETION, signed);
      assert.equal(first.statusCode, 200);
      const [again, concurrent] = await Promise.all([
        c.post(DATA_DELETION, signed),
        c.post(DATA_DELETION, signed),
      ]);
      for (const res of [again, concurrent]) {
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json(), first.json());
      }
      const requests = await c.services.storage.db.select().from(dataDeletionRequests);
      assert.equal(requests.length, 1);
      assert.ok(requests[0]?.completedAt, 'completed');
      assert.equal((await c.events('data_deletion.requested')).length, 1);
      assert.equal((await c.events('connection.revoked')).length, 1);
    });

    test('while a request of the person is open, another one answers with its code and completes it', async (t) => {
      const c = await connected(t, backend);
      // An open request, as one being carried out (or whose first attempt failed) leaves it.
      await c.services.storage.db.insert(dataDeletionRequests).values({
        confirmationCode: 'OpenRequest00001',
        providerUserId: PROVIDER_USER,
        connectionsDeleted: 0,
        summary: 'The deletion is in progress.',
      });
      const res = await c.post(
        DATA_DELETION,
        c.p.sandbox.signedRequestFor(c.p.appId, PROVIDER_USER),
      );
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().confirmation_code, 'OpenRequest00001');
      const requests = await c.services.storage.db.select().from(dataDeletionRequests);
      assert.equal(requests.length, 1);
      assert.ok(requests[0]?.completedAt, 'the open request is now complete');
      assert.equal(await c.status(), 'inactive');

      // Once complete, a new request of the person gets a new code.
      c.p.sandbox.advanceTime(2_000);
      const later = await c.post(
        DATA_DELETION,
        c.p.sandbox.signedRequestFor(c.p.appId, PROVIDER_USER),
      );
      assert.notEqual(later.json().confirmation_code, 'OpenRequest00001');
    });
  });
}
