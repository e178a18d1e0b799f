/**
 * The WhatsApp Cloud API client (src/partner/cloud-api/cloud-api.ts) against the sandbox provider over
 * real HTTP: phone numbers, templates (create → PENDING → APPROVED / REJECTED, delete), sends
 * (text, template), the refusals and their kinds, permissions, dead tokens.
 */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { createProviderClient, ProviderError } from '../../src/partner/provider-client.ts';
import type { MessageTemplate } from '../../src/partner/cloud-api/cloud-api.ts';
import { startTestProvider, type TestProvider } from '../helpers/provider.ts';
import { deadline } from '../helpers/deadlines.ts';

function clientFor(p: TestProvider) {
  return createProviderClient({
    graphBaseUrl: p.sandbox.url,
    apiVersion: 'v21.0',
    appId: p.appId,
    appSecret: p.appSecret,
    redirectUri: p.redirectUri,
    timeoutMs: 5_000,
  });
}

/** A person's token and WABA ids, as a connection would hold them. */
async function grant(p: TestProvider, userId: string, permissions?: string[]) {
  const client = clientFor(p);
  const code = p.sandbox.authorize({
    appId: p.appId,
    redirectUri: p.redirectUri,
    userId,
    ...(permissions && { permissions }),
  });
  const { accessToken } = await client.exchangeCode(code);
  const info = await client.inspectToken(accessToken);
  const wabaIds = info.granularScopes.find(
    (g) => g.scope === 'whatsapp_business_management',
  )?.targetIds;
  return { client, token: accessToken, wabaIds: wabaIds ?? [] };
}

/** Onboard the grant's WABAs as Portico does after a grant: subscribe, register each number. */
async function onboarded(g: Awaited<ReturnType<typeof grant>>) {
  const cloud = g.client.cloud(g.token);
  for (const wabaId of g.wabaIds) {
    await cloud.subscribeApp(wabaId);
    for (const n of await cloud.listPhoneNumbers(wabaId))
      await cloud.registerNumber(n.id, '123456');
  }
  return g;
}

async function rejection(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ProviderError, `expected ProviderError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}

async function templateNamed(
  list: () => Promise<MessageTemplate[]>,
  name: string,
  status: string,
): Promise<MessageTemplate> {
  const giveUp = Date.now() + deadline(5_000);
  for (;;) {
    const found = (await list()).find((t) => t.name === name);
    if (found?.status === status) return found;
    if (Date.now() > giveUp) assert.fail(`${name} never became ${status}`);
    await delay(25);
  }
}

describe('WhatsApp Cloud API client against the sandbox (real HTTP)', () => {
  test('phone numbers: two per WABA, every field; no token in any URL', async (t) => {
    const p = await startTestProvider(t);
    const { client, token, wabaIds } = await grant(p, '100012345');
    assert.equal(wabaIds.length, 2);
    const numbers = await client.cloud(token).listPhoneNumbers(wabaIds[0]!);
    assert.equal(numbers.length, 2);
    for (const n of numbers) {
      assert.match(n.id, /^[0-9]+$/);
      assert.match(n.displayPhoneNumber, /^\+1 555-01[12]-[0-9]{4}$/);
      assert.match(n.verifiedName, /^Sandbox Business /);
      assert.equal(n.qualityRating, 'GREEN');
      assert.equal(n.messagingLimitTier, 'TIER_2K');
      assert.equal(n.messagingLimitPerDay, 2000);
      assert.equal(n.wabaId, wabaIds[0]);
    }
    const other = await client.cloud(token).listPhoneNumbers(wabaIds[1]!);
    assert.notDeepEqual(
      other.map((n) => n.id),
      numbers.map((n) => n.id),
    );
    for (const call of p.sandbox.calls) assert.ok(!call.url.includes(token), call.url);
  });

  test('templates: seeded hello_world; create → PENDING → APPROVED; a "reject" name → REJECTED; pages; delete', async (t) => {
    const p = await startTestProvider(t);
    const { client, token, wabaIds } = await grant(p, '100012346');
    const waba = wabaIds[0]!;
    const all = async () => (await client.cloud(token).listTemplates(waba, { limit: 100 })).items;
    const seeded = await all();
    assert.deepEqual(
      seeded.map((x) => [x.name, x.language, x.category, x.status]),
      [['hello_world', 'en_US', 'UTILITY', 'APPROVED']],
    );
    assert.equal(seeded[0]!.components[0]!.text, 'Hello World');
    const body = [{ type: 'BODY' as const, text: 'Your order {{1}} has shipped' }];
    const created = await client.cloud(token).createTemplate(waba, {
      name: 'order_shipped',
      language: 'en_US',
      category: 'UTILITY',
      components: body,
    });
    assert.equal(created.status, 'PENDING');
    assert.equal((await all()).find((x) => x.name === 'order_shipped')?.status, 'PENDING');
    await templateNamed(all, 'order_shipped', 'APPROVED');
    await client.cloud(token).createTemplate(waba, {
      name: 'please_reject_me',
      language: 'en_US',
      category: 'MARKETING',
      components: body,
    });
    await templateNamed(all, 'please_reject_me', 'REJECTED');
    // The same name and language again: Graph's 100, final for a template.
    const dup = await rejection(
      client.cloud(token).createTemplate(waba, {
        name: 'order_shipped',
        language: 'en_US',
        category: 'UTILITY',
        components: body,
      }),
    );
    assert.equal(dup.kind, 'rejected');
    // Pages of one follow `after` until it is null.
    const names: string[] = [];
    let after: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await client.cloud(token).listTemplates(waba, {
        limit: 1,
        ...(after && { after }),
      });
      names.push(...page.items.map((x) => x.name));
      if (page.after === null) break;
      after = page.after;
    }
    assert.deepEqual(names, ['hello_world', 'order_shipped', 'please_reject_me']);
    await client.cloud(token).deleteTemplate(waba, 'order_shipped');
    assert.ok(!(await all()).some((x) => x.name === 'order_shipped'));
    assert.equal(
      (await rejection(client.cloud(token).deleteTemplate(waba, 'order_shipped'))).kind,
      'rejected',
    );
    // The other WABA has its own templates.
    assert.deepEqual(
      (await client.cloud(token).listTemplates(wabaIds[1]!, {})).items.map((x) => x.name),
      ['hello_world'],
    );
  });

  test('sends: a template at once; text accepted outside the window too (its status fails it); unknown template 132001', async (t) => {
    const p = await startTestProvider(t);
    const { client, token, wabaIds } = await onboarded(await grant(p, '100012347'));
    const [number] = await client.cloud(token).listPhoneNumbers(wabaIds[0]!);
    const from = number!.id;
    const hello = { name: 'hello_world', language: { code: 'en_US' } };
    const sent = await client
      .cloud(token)
      .sendMessage(from, { to: '+16505551234', type: 'template', template: hello }, 'msg_1');
    assert.match(sent.wamid, /^wamid\./);
    assert.equal(sent.waId, '16505551234');
    assert.equal(p.sandbox.cloud.sendsOf('msg_1'), 1);
    const text = { to: '16505551234', type: 'text' as const, text: { body: 'hi there' } };
    // Outside the window the provider still answers a wamid; a `failed` status (131047) follows
    // (test/sandbox-provider/cloud-statuses.test.ts).
    const outside = await client.cloud(token).sendMessage(from, text, 'msg_2');
    assert.match(outside.wamid, /^wamid\./);
    assert.equal(p.sandbox.cloud.sendsOf('msg_2'), 1);
    const wrote = await p.sandbox.cloud.writeIn({
      phoneNumberId: from,
      from: '16505551234',
      text: 'hello?',
    });
    assert.equal(wrote.ok, true);
    assert.match((await client.cloud(token).sendMessage(from, text, 'msg_3')).wamid, /^wamid\./);
    const unknown = await rejection(
      client.cloud(token).sendMessage(
        from,
        {
          to: '16505551234',
          type: 'template',
          template: { name: 'nope', language: { code: 'en_US' } },
        },
        'msg_4',
      ),
    );
    assert.equal(unknown.kind, 'rejected');
    assert.equal(unknown.graphCode, 132001);
    assert.equal(unknown.title, 'Template does not exist');
    const badTo = await rejection(
      client.cloud(token).sendMessage(from, { ...text, to: 'not-a-number' }, 'msg_5'),
    );
    assert.equal(badTo.kind, 'rejected');
    const received = p.sandbox.cloud.messages.filter((m) => m.direction === 'received');
    assert.deepEqual(
      received.map((m) => m.template?.params ?? m.text),
      [[], 'hi there', 'hi there'],
    );
  });

  test('over the per-number rate → throttled (130429), retryable', async (t) => {
    const p = await startTestProvider(t, { cloud: { sendsPerSecond: 2 } });
    const { client, token, wabaIds } = await onboarded(await grant(p, '100012348'));
    const [number] = await client.cloud(token).listPhoneNumbers(wabaIds[0]!);
    const template = { name: 'hello_world', language: { code: 'en_US' } };
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        client
          .cloud(token)
          .sendMessage(number!.id, { to: '16505550001', type: 'template', template }, `r${i}`),
      ),
    );
    const refused = results
      .filter((r) => r.status === 'rejected')
      .map((r) => r.reason as ProviderError);
    assert.ok(refused.length >= 1 && refused.length <= 4, `${refused.length} refused`);
    for (const err of refused) {
      assert.equal(err.kind, 'throttled');
      assert.equal(err.graphCode, 130429);
      assert.equal(err.title, 'Rate limit hit');
    }
  });

  test('permissions: no whatsapp permission → permission (10); a WABA outside the grant → permission (200); a dead token → dead_token', async (t) => {
    const p = await startTestProvider(t, { permissions: ['business_management'] });
    const owner = await grant(p, '100012349', [
      'business_management',
      'whatsapp_business_messaging',
      'whatsapp_business_management',
    ]);
    const plain = await grant(p, '100012350', ['business_management']);
    const noPermission = await rejection(
      plain.client.cloud(plain.token).listPhoneNumbers(owner.wabaIds[0]!),
    );
    assert.equal(noPermission.kind, 'permission');
    assert.equal(noPermission.graphCode, 10);
    const stranger = await grant(p, '100012351', [
      'business_management',
      'whatsapp_business_messaging',
      'whatsapp_business_management',
    ]);
    const notTheirs = await rejection(
      stranger.client.cloud(stranger.token).listTemplates(owner.wabaIds[0]!, {}),
    );
    assert.equal(notTheirs.kind, 'permission');
    assert.equal(notTheirs.graphCode, 200);
    p.sandbox.revokeTokens(p.appId, '100012349');
    const dead = await rejection(
      owner.client.cloud(owner.token).listPhoneNumbers(owner.wabaIds[0]!),
    );
    assert.equal(dead.kind, 'dead_token');
    // Ids that would change the URL's path are refused before any I/O.
    const calls = p.sandbox.calls.length;
    assert.equal(
      (await rejection(owner.client.cloud(owner.token).listPhoneNumbers('../me'))).kind,
      'other',
    );
    assert.equal(p.sandbox.calls.length, calls);
  });
});

describe('the sandbox answers the Cloud API as the provider does (raw HTTP)', () => {
  test('an invalid token → 401 with code 190; access_token in the query is accepted', async (t) => {
    const p = await startTestProvider(t);
    const { token, wabaIds } = await grant(p, '4401');
    const url = `${p.sandbox.url}/v21.0/${wabaIds[0]}/phone_numbers`;
    const invalid = await fetch(url, { headers: { authorization: 'Bearer not-a-token' } });
    assert.equal(invalid.status, 401);
    const { error } = (await invalid.json()) as { error: Record<string, unknown> };
    assert.equal(error.code, 190);
    assert.equal(error.type, 'OAuthException');
    assert.equal(typeof error.fbtrace_id, 'string');
    const viaQuery = await fetch(`${url}?${new URLSearchParams({ access_token: token })}`);
    assert.equal(viaQuery.status, 200);
    assert.ok(Array.isArray(((await viaQuery.json()) as { data: unknown[] }).data));
  });

  test('a formatted recipient number (+1 (650) 555-1234) is accepted; wa_id is its digits', async (t) => {
    const p = await startTestProvider(t);
    const { client, token, wabaIds } = await onboarded(await grant(p, '4402'));
    const [number] = await client.cloud(token).listPhoneNumbers(wabaIds[0]!);
    const res = await fetch(`${p.sandbox.url}/v21.0/${number!.id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        messaging_product: 'whatsapp',
        to: '+1 (650) 555-1234',
        type: 'template',
        template: { name: 'hello_world', language: { code: 'en_US' } },
      }),
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { contacts: { input: string; wa_id: string }[] };
    assert.deepEqual(body.contacts, [{ input: '+1 (650) 555-1234', wa_id: '16505551234' }]);
  });

  test('a refused send carries error_data.details, as the Cloud API does', async (t) => {
    const p = await startTestProvider(t);
    const { client, token, wabaIds } = await onboarded(await grant(p, '4403'));
    const [number] = await client.cloud(token).listPhoneNumbers(wabaIds[0]!);
    const res = await fetch(`${p.sandbox.url}/v21.0/${number!.id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        messaging_product: 'whatsapp',
        to: '16505551234',
        type: 'template',
        template: { name: 'no_such_template', language: { code: 'en_US' } },
      }),
    });
    assert.equal(res.status, 400);
    const { error } = (await res.json()) as { error: Record<string, unknown> };
    assert.equal(error.code, 132001);
    const data = error.error_data as { messaging_product: string; details: string };
    assert.equal(data.messaging_product, 'whatsapp');
    assert.match(data.details, /template/i);
  });

  test("unknown paths are answered with Graph's error envelope", async (t) => {
    const p = await startTestProvider(t);
    for (const [method, path] of [
      ['GET', '/v21.0/123/no_such_edge'],
      ['POST', '/nothing/here'],
    ] as const) {
      const res = await fetch(`${p.sandbox.url}${path}`, { method });
      assert.equal(res.status, 400, path);
      assert.match(String(res.headers.get('content-type')), /^application\/json/);
      const { error } = (await res.json()) as { error: Record<string, unknown> };
      assert.equal(error.type, 'OAuthException');
      assert.equal(error.code, 100);
      assert.match(String(error.message), /Unknown path components/);
      assert.equal(typeof error.fbtrace_id, 'string');
    }
  });
});
