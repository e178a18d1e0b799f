/**
 * Onboarding after a grant, on both backends against the sandbox over real HTTP: connecting
 * subscribes Portico's app to each WABA and registers each number with a sealed PIN; a number
 * that is not onboarded is refused (409 `number_not_ready`) before any credit is reserved; a
 * registration refused for too many attempts (133016) shows `nextAttemptAt` and the settings
 * page's Retry registers it later; two instances onboarding at once register each number once;
 * `PARTNER_ADDED` onboards.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { commandNamed, runCommand } from '../../src/cli/commands.ts';
import { numberOnboarding } from '../../src/db/schema/index.ts';
import { buildTestApp } from '../helpers/app.ts';
import { eventually, openInstances } from '../helpers/instances.ts';
import { hello, MESSAGES } from '../helpers/messaging.ts';
import { connectPortal, startTestProvider, type TestProvider } from '../helpers/provider.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends, type Backend } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword } from '../helpers/web.ts';

const NUMBERS = '/api/v1/external/messaging/numbers';
/** The sandbox's default person: WABAs `1020345678{01,02}`, numbers `{waba}{1,2}`. */
const WABA = '102034567801';
const [FIRST, SECOND] = [`${WABA}1`, `${WABA}2`];

/** Registration calls the sandbox received for `phoneNumberId`. */
const registrations = (p: TestProvider, phoneNumberId: string) =>
  p.sandbox.calls.filter((c) => c.method === 'POST' && c.url.endsWith(`/${phoneNumberId}/register`))
    .length;

interface Listed {
  id: string;
  onboarding: {
    webhooksSubscribed: boolean;
    registered: boolean;
    lastError: string | null;
    nextAttemptAt: string | null;
  };
}

/** The app listening (statuses come back), a portal with a password, connected with credit. */
async function setup(
  t: TestContext,
  backend: Backend,
  beforeConnect: (p: TestProvider) => void = () => {},
) {
  const provider = await startTestProvider(t);
  const built = await buildTestApp(t, backend, {
    ...provider.env,
    PROVIDER_WEBHOOK_VERIFY_TOKEN: 'test-verify-token',
    RATE_LIMIT_PER_MINUTE: '1000000',
  });
  const url = await built.app.listen({ host: '127.0.0.1', port: 0 });
  provider.sandbox.configureApp(provider.appId, {
    webhookUrl: `${url}/api/provider/webhooks`,
    webhookVerifyToken: 'test-verify-token',
  });
  const portal = await portalWithPassword(built.services);
  const portalId = await built.services.accounts.portalIdFor(portal.portalCode);
  beforeConnect(provider);
  const connected = await connectPortal(built.services, provider, {
    portalId,
    userId: portal.userId,
  });
  assert.deepEqual(connected, { ok: true });
  await built.services.messaging.addCredit({ portalId, amount: 100, note: 't', actor: CLI_ACTOR });
  await built.services.messaging.start();
  const numbers = async () => {
    const res = await built.app.inject({ url: NUMBERS, headers: { authorization: portal.token } });
    assert.equal(res.statusCode, 200, res.body);
    return new Map(res.json<{ data: { items: Listed[] } }>().data.items.map((n) => [n.id, n]));
  };
  const send = (from: string) =>
    built.app.inject({
      method: 'POST',
      url: MESSAGES,
      headers: { authorization: portal.token },
      payload: hello('+16505551234', from),
    });
  return { ...built, provider, portal, portalId, numbers, send };
}

for (const backend of backends()) {
  describe(`partner: onboarding (${backend.name})`, () => {
    test('connecting subscribes the app to each WABA and registers each number', async (t) => {
      const s = await setup(t, backend);
      const wabas = await s.services.partner.wabaIdsOf(s.portalId);
      assert.equal(wabas.length, 2);
      for (const waba of wabas) {
        assert.deepEqual(s.provider.sandbox.cloud.subscribedApps(waba), [s.provider.appId]);
        for (const id of [`${waba}1`, `${waba}2`]) {
          assert.equal(s.provider.sandbox.cloud.isRegistered(id), true, id);
          assert.equal(registrations(s.provider, id), 1, id);
        }
      }
      const checks = s.provider.sandbox.calls.filter(
        (c) => c.method === 'GET' && c.url.includes('/subscribed_apps'),
      );
      assert.equal(checks.length, 2, 'the subscription of each WABA is checked');
      const listed = await s.numbers();
      assert.equal(listed.size, 4);
      for (const n of listed.values())
        assert.deepEqual(n.onboarding, {
          webhooksSubscribed: true,
          registered: true,
          lastError: null,
          nextAttemptAt: null,
        });
      // Each number's PIN is its own, sealed with the keyring (keys rotate re-seals it).
      const rows = await queryRows<{ pin: { ciphertext: string; keyId: string } }>(
        s.services.storage,
        sql`select pin from number_onboarding where portal_id = ${s.portalId}`,
      );
      assert.equal(rows.length, 4);
      for (const r of rows) assert.ok(r.pin.ciphertext && r.pin.keyId);
      const check = await s.services.partner.checkKeys();
      assert.match(JSON.stringify(check), /number_onboarding\.pin/);
      // `partner onboard` runs it again: nothing left to register, every number ready.
      const cli = (await runCommand(s.services, 'partner onboard', {
        portal: s.portal.portalCode,
      })) as { ran: boolean; numbers: { registered: boolean }[] };
      assert.equal(cli.ran, true);
      assert.equal(cli.numbers.length, 4);
      assert.equal(
        registrations(s.provider, FIRST),
        1,
        'a registered number is not registered again',
      );
      const printed = commandNamed('partner onboard').print(cli, {
        options: {},
        storage: () => 'test',
      });
      assert.match(printed, new RegExp(`${FIRST} \\(WABA ${WABA}\\): ready`));
      // And the numbers send.
      const sent = await s.send(FIRST);
      assert.equal(sent.statusCode, 202, sent.body);
    });

    test('133016: the state says when; a send is 409 before credit; Retry later registers', async (t) => {
      const s = await setup(t, backend, (p) => p.sandbox.cloud.exhaustRegistrations(FIRST));
      const listed = await s.numbers();
      const blocked = listed.get(FIRST)!.onboarding;
      assert.equal(blocked.webhooksSubscribed, true);
      assert.equal(blocked.registered, false);
      assert.match(blocked.lastError ?? '', /too many registration attempts/);
      const next = Date.parse(blocked.nextAttemptAt ?? '');
      assert.ok(Math.abs(next - (Date.now() + 72 * 3600_000)) < 60_000, blocked.nextAttemptAt!);
      assert.equal(listed.get(SECOND)!.onboarding.registered, true);

      const refused = await s.send(FIRST);
      assert.equal(refused.statusCode, 409, refused.body);
      const error = refused.json().error;
      assert.equal(error.code, 'number_not_ready');
      assert.match(error.message, /not registered/);
      assert.match(error.message, new RegExp(blocked.nextAttemptAt!.replace(/[.]/g, '\\.')));
      const [counts] = await queryRows<{ messages: number; reserves: number }>(
        s.services.storage,
        sql`select (select count(*)::int from messages where portal_id = ${s.portalId}) as messages,
          (select count(*)::int from credit_transactions where portal_id = ${s.portalId}
            and kind = 'reserve') as reserves`,
      );
      assert.deepEqual({ ...counts }, { messages: 0, reserves: 0 });
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 100,
        reserved: 0,
        currency: 'EUR',
      });

      // The settings page shows it and offers Retry; before the time, nothing is sent.
      const b = new Browser(s.app);
      await b.signIn(s.portal.email);
      const page = await b.get('/settings');
      assert.match(page.body, /data-testid="onboarding-state"[^>]*>Not ready: not registered/);
      assert.match(page.body, /too many registration attempts/);
      assert.match(page.body, /data-testid="onboarding-retry"/);
      const early = await b.post('/settings/onboarding', { csrf: csrfOf(page.body) });
      assert.equal(early.statusCode, 303);
      assert.equal(early.headers.location, '/settings?done=onboarding_retried#connection');
      assert.equal(registrations(s.provider, FIRST), 1, 'not tried before nextAttemptAt');

      // 72 hours pass (on the sandbox's clock and on the stored time).
      s.provider.sandbox.advanceTime(72 * 3600_000 + 1000);
      await s.services.storage.db
        .update(numberOnboarding)
        .set({ nextAttemptAt: new Date(Date.now() - 1000) })
        .where(
          and(eq(numberOnboarding.portalId, s.portalId), eq(numberOnboarding.phoneNumberId, FIRST)),
        );
      const again = await b.get('/settings');
      const retried = await b.post('/settings/onboarding', { csrf: csrfOf(again.body) });
      assert.equal(retried.statusCode, 303);
      assert.equal(registrations(s.provider, FIRST), 2);
      assert.deepEqual((await s.numbers()).get(FIRST)!.onboarding, {
        webhooksSubscribed: true,
        registered: true,
        lastError: null,
        nextAttemptAt: null,
      });
      const after = await b.get('/settings?done=onboarding_retried');
      assert.doesNotMatch(after.body, /data-testid="onboarding-retry"/);
      const sent = await s.send(FIRST);
      assert.equal(sent.statusCode, 202, sent.body);
    });

    test('two instances onboarding at once register each number once', async (t) => {
      const provider = await startTestProvider(t);
      const [a, b] = await openInstances(t, backend, 2, {
        ...provider.env,
        TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      });
      const portal = await portalWithPassword(a!.services);
      const portalId = await a!.services.accounts.portalIdFor(portal.portalCode);
      await connectPortal(a!.services, provider, { portalId, userId: portal.userId });
      // The business deregisters its numbers (at the provider, with the connection's token).
      const [token] = provider.sandbox.tokensOf(provider.appId, '100012345678');
      const wabas = await a!.services.partner.wabaIdsOf(portalId);
      const ids = wabas.flatMap((w) => [`${w}1`, `${w}2`]);
      for (const id of ids) {
        const res = await fetch(`${provider.sandbox.url}/v21.0/${id}/deregister`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(res.status, 200);
      }
      await a!.services.storage.db
        .update(numberOnboarding)
        .set({ registered: false })
        .where(eq(numberOnboarding.portalId, portalId));
      const before = new Map(ids.map((id) => [id, registrations(provider, id)]));

      const outcomes = await Promise.all([
        a!.services.partner.onboardConnection(portalId),
        b!.services.partner.onboardConnection(portalId),
      ]);
      assert.ok(
        outcomes.some((o) => o.ran),
        JSON.stringify(outcomes),
      );
      for (const id of ids) {
        assert.equal(registrations(provider, id) - before.get(id)!, 1, id);
        assert.equal(provider.sandbox.cloud.isRegistered(id), true, id);
      }
      const states = await b!.services.partner.onboardingStates(portalId);
      assert.ok([...states.values()].every((s) => s.registered && s.webhooksSubscribed));
    });

    test('account_update PARTNER_ADDED onboards the WABA', async (t) => {
      const s = await setup(t, backend);
      // The subscription is gone at the provider (the business removed it there).
      const [token] = s.provider.sandbox.tokensOf(s.provider.appId, '100012345678');
      const removed = await fetch(`${s.provider.sandbox.url}/v21.0/${WABA}/subscribed_apps`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(removed.status, 200);
      assert.deepEqual(s.provider.sandbox.cloud.subscribedApps(WABA), []);
      const outcome = await s.provider.sandbox.cloud.accountUpdate(WABA, 'PARTNER_ADDED');
      assert.ok(outcome.ok);
      assert.deepEqual(
        outcome.deliveries.map((d) => d.status),
        [200],
      );
      await eventually(
        () => s.provider.sandbox.cloud.subscribedApps(WABA).includes(s.provider.appId),
        'PARTNER_ADDED subscribes the app again',
      );
    });
  });
}
