import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { createProviderClient, ProviderError } from '../../src/partner/provider-client.ts';
import { classifyGraphError } from '../../src/partner/provider-error.ts';
import { startTestProvider, type TestProvider } from '../helpers/provider.ts';

function clientFor(p: TestProvider, overrides: { appSecret?: string; redirectUri?: string } = {}) {
  return createProviderClient({
    graphBaseUrl: p.sandbox.url,
    apiVersion: 'v21.0',
    appId: p.appId,
    appSecret: overrides.appSecret ?? p.appSecret,
    redirectUri: overrides.redirectUri ?? p.redirectUri,
    timeoutMs: 5_000,
  });
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

describe('provider client against the sandbox provider (real HTTP)', () => {
  test('code exchange → long-lived exchange → debug_token; no secret or token in any URL', async (t) => {
    const p = await startTestProvider(t);
    const client = clientFor(p);
    const code = p.sandbox.authorize({ appId: p.appId, redirectUri: p.redirectUri, userId: '555' });
    const short = await client.exchangeCode(code);
    assert.equal(short.tokenType, 'bearer');
    assert.ok(short.expiresIn! > 0 && short.expiresIn! <= 7200);
    const long = await client.exchangeForLongLived(short.accessToken);
    assert.ok(long.expiresIn! > 50 * 24 * 3600);
    const info = await client.inspectToken(long.accessToken);
    assert.equal(info.isValid, true);
    assert.equal(info.userId, '555');
    assert.equal(info.appId, p.appId);
    assert.deepEqual(info.scopes, [
      'business_management',
      'whatsapp_business_messaging',
      'whatsapp_business_management',
    ]);
    assert.ok(info.granularScopes.every((g) => g.targetIds.length > 0));
    assert.ok(info.expiresAt! * 1000 > Date.now());
    const profile = await client.graphGet(long.accessToken, 'me?fields=id,name');
    assert.equal(profile.id, '555');
    for (const call of p.sandbox.calls) {
      for (const secret of [p.appSecret, code, short.accessToken, long.accessToken])
        assert.ok(!call.url.includes(secret), `${call.url} carries a secret`);
      assert.ok(!/access_token=|client_secret=|input_token=/.test(call.url));
    }
    assert.ok(p.sandbox.calls.every((c) => c.method === 'POST' || c.url.startsWith('/v21.0/me')));
  });

  test('wrong client secret → ProviderError, message without secret or code', async (t) => {
    const p = await startTestProvider(t);
    const code = p.sandbox.authorize({ appId: p.appId, redirectUri: p.redirectUri });
    const err = await rejection(
      clientFor(p, { appSecret: 'wrong-secret-wrong-secret' }).exchangeCode(code),
    );
    assert.equal(err.kind, 'other');
    assert.equal(err.graphCode, 1);
    assert.ok(err.fbtraceId);
    assert.ok(!err.message.includes(code) && !err.message.includes('wrong-secret'));
    // The code was not consumed by a refused exchange: the right secret still works.
    await clientFor(p).exchangeCode(code);
  });

  test('redirect URI mismatch → redirect_uri_mismatch (Graph 100/36008)', async (t) => {
    const p = await startTestProvider(t);
    const code = p.sandbox.authorize({ appId: p.appId, redirectUri: p.redirectUri });
    const err = await rejection(
      clientFor(p, { redirectUri: `${p.redirectUri}/` }).exchangeCode(code),
    );
    assert.equal(err.kind, 'redirect_uri_mismatch');
    assert.equal(err.graphSubcode, 36008);
  });

  test('a reused code → invalid_code (single use)', async (t) => {
    const p = await startTestProvider(t);
    const client = clientFor(p);
    const code = p.sandbox.authorize({ appId: p.appId, redirectUri: p.redirectUri });
    await client.exchangeCode(code);
    const err = await rejection(client.exchangeCode(code));
    assert.equal(err.kind, 'invalid_code');
    assert.equal(err.graphSubcode, 36009);
  });

  test('an expired code (sandbox clock +61 s) → invalid_code', async (t) => {
    const p = await startTestProvider(t);
    const code = p.sandbox.authorize({ appId: p.appId, redirectUri: p.redirectUri });
    p.sandbox.advanceTime(61_000);
    const err = await rejection(clientFor(p).exchangeCode(code));
    assert.equal(err.kind, 'invalid_code');
    assert.equal(err.graphSubcode, 36007);
  });

  test('PKCE (S256): a code bound to a challenge needs its verifier; one without takes none', async (t) => {
    const p = await startTestProvider(t);
    const verifier = randomBytes(32).toString('base64url');
    const codeChallenge = createHash('sha256').update(verifier).digest('base64url');
    const bound = () =>
      p.sandbox.authorize({ appId: p.appId, redirectUri: p.redirectUri, codeChallenge });
    const token = (body: Record<string, string>) =>
      fetch(`${p.sandbox.url}/v21.0/oauth/access_token`, {
        method: 'POST',
        body: new URLSearchParams({
          client_id: p.appId,
          client_secret: p.appSecret,
          redirect_uri: p.redirectUri,
          ...body,
        }),
      });
    for (const wrong of [{}, { code_verifier: randomBytes(32).toString('base64url') }]) {
      const res = await token({ code: bound(), ...wrong });
      assert.equal(res.status, 400);
      const { error } = (await res.json()) as { error: Record<string, unknown> };
      assert.equal(error.type, 'OAuthException');
      assert.equal(error.code, 100);
      assert.equal(typeof error.fbtrace_id, 'string');
      assert.match(String(error.message), /code_verifier/);
    }
    // A code issued without a challenge refuses a verifier (no PKCE downgrade).
    const unbound = p.sandbox.authorize({ appId: p.appId, redirectUri: p.redirectUri });
    assert.equal((await token({ code: unbound, code_verifier: verifier })).status, 400);
    const info = await clientFor(p).exchangeCode(bound(), verifier);
    assert.ok(info.accessToken);
  });

  test('an unknown code → invalid_code', async (t) => {
    const p = await startTestProvider(t);
    assert.equal((await rejection(clientFor(p).exchangeCode('nope'))).kind, 'invalid_code');
  });

  test('a revoked token: debug_token says invalid (190); Graph reads answer dead_token', async (t) => {
    const p = await startTestProvider(t);
    const client = clientFor(p);
    const code = p.sandbox.authorize({ appId: p.appId, redirectUri: p.redirectUri, userId: '9' });
    const { accessToken } = await client.exchangeCode(code);
    p.sandbox.revokeTokens(p.appId, '9');
    const info = await client.inspectToken(accessToken);
    assert.equal(info.isValid, false);
    assert.equal(info.errorCode, 190);
    assert.equal((await rejection(client.graphGet(accessToken, 'me'))).kind, 'dead_token');
    assert.equal((await rejection(client.exchangeForLongLived(accessToken))).kind, 'dead_token');
  });

  test('a wrong app secret on debug_token is not mistaken for a dead user token', async (t) => {
    const p = await startTestProvider(t);
    const err = await rejection(
      clientFor(p, { appSecret: 'wrong-secret-wrong-secret' }).inspectToken('whatever'),
    );
    assert.notEqual(err.kind, 'dead_token');
  });

  test('a provider that does not answer → unavailable after the timeout', async (t) => {
    const held: ServerResponse[] = [];
    const server = createServer((_req, res) => held.push(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      server.close();
    });
    const client = createProviderClient({
      graphBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiVersion: 'v21.0',
      appId: '1',
      appSecret: 'secret-secret-secret',
      redirectUri: 'http://localhost/cb',
      timeoutMs: 200,
    });
    const err = await rejection(client.exchangeCode('code'));
    assert.equal(err.kind, 'unavailable');
    assert.match(err.message, /did not answer within 200 ms/);
  });

  test('an unreachable provider → unavailable', async () => {
    const client = createProviderClient({
      graphBaseUrl: 'http://127.0.0.1:1',
      apiVersion: 'v21.0',
      appId: '1',
      appSecret: 'secret-secret-secret',
      redirectUri: 'http://localhost/cb',
      timeoutMs: 2_000,
    });
    assert.equal((await rejection(client.exchangeCode('c'))).kind, 'unavailable');
  });

  test('Graph error classification', () => {
    assert.equal(classifyGraphError(190, 463), 'dead_token');
    assert.equal(classifyGraphError(190, undefined), 'dead_token');
    assert.equal(classifyGraphError(100, 36008), 'redirect_uri_mismatch');
    assert.equal(classifyGraphError(200, undefined), 'permission');
    assert.equal(classifyGraphError(10, undefined), 'permission');
    assert.equal(classifyGraphError(2, undefined), 'unavailable');
    assert.equal(classifyGraphError(4, undefined), 'throttled');
    assert.equal(classifyGraphError(100, undefined), 'other');
    // WhatsApp Cloud API codes.
    for (const code of [130429, 131056, 80007])
      assert.equal(classifyGraphError(code, undefined), 'throttled');
    for (const code of [131047, 131026, 131050, 132000, 132001, 132015, 132016, 131999])
      assert.equal(classifyGraphError(code, undefined), 'rejected', String(code));
    assert.equal(classifyGraphError(131016, undefined), 'unavailable');
    assert.equal(
      new ProviderError('rejected', 'x', { graphCode: 131026 }).title,
      'Message undeliverable',
    );
    assert.equal(
      new ProviderError('rejected', 'x', { graphCode: 131999 }).title,
      'Rejected by the provider',
    );
    assert.equal(new ProviderError('unavailable', 'x').title, 'Provider unavailable');
  });

  test('a 5xx carrying Graph code 1 or 131000 is unavailable (retried); a 4xx 131000 stays rejected', async (t) => {
    let answer = { status: 500, code: 1 };
    const server = createServer((_req, res) => {
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: answer.code, message: 'x', fbtrace_id: 'f' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const client = createProviderClient({
      graphBaseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiVersion: 'v21.0',
      appId: '1',
      appSecret: 'a-secret-long-enough',
      redirectUri: 'http://localhost/cb',
      timeoutMs: 5_000,
    });
    const send = () =>
      rejection(
        client
          .cloud('token')
          .sendMessage('123', { to: '16505551234', type: 'text', text: { body: 'b' } }, 'm'),
      );
    for (const code of [1, 131000]) {
      answer = { status: 500, code };
      const err = await send();
      assert.equal(err.kind, 'unavailable', `HTTP 500 with Graph code ${code}`);
      assert.equal(err.graphCode, code);
    }
    answer = { status: 400, code: 131000 };
    assert.equal((await send()).kind, 'rejected');
  });

  test('a Retry-After header on a throttled answer is kept in milliseconds', async (t) => {
    const server = createServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json', 'retry-after': '7' });
      res.end(
        JSON.stringify({ error: { code: 130429, message: 'Rate limit hit', fbtrace_id: 'x' } }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const client = createProviderClient({
      graphBaseUrl: `http://127.0.0.1:${port}`,
      apiVersion: 'v21.0',
      appId: '1',
      appSecret: 'a-secret-long-enough',
      redirectUri: 'http://localhost/cb',
      timeoutMs: 5_000,
    });
    const err = await rejection(
      client
        .cloud('token')
        .sendMessage('123', { to: '16505551234', type: 'text', text: { body: 'b' } }, 'm'),
    );
    assert.equal(err.kind, 'throttled');
    assert.equal(err.retryAfterMs, 7_000);
    assert.ok(!err.message.includes('token'));
  });
});

describe('sandbox provider dialog (HTTP)', () => {
  const dialog = (p: TestProvider, q: Record<string, string>) =>
    fetch(`${p.sandbox.url}/v21.0/dialog/oauth?${new URLSearchParams(q)}`);

  test('shows the permissions; Allow redirects with a code and the state', async (t) => {
    const p = await startTestProvider(t);
    const res = await dialog(p, {
      client_id: p.appId,
      redirect_uri: p.redirectUri,
      state: 'st<script>',
      response_type: 'code',
      scope: 'business_management,whatsapp_business_messaging',
    });
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /whatsapp_business_messaging/);
    assert.match(html, /send messages for your business/);
    assert.ok(!html.includes('st<script>'), 'auto-escaped');
    const body = new URLSearchParams({
      client_id: p.appId,
      redirect_uri: p.redirectUri,
      response_type: 'code',
      state: 'st1',
      user_id: '777',
      scope: 'business_management,whatsapp_business_messaging',
      decision: 'allow',
    });
    body.append('permission', 'business_management');
    body.append('permission', 'whatsapp_business_messaging');
    const allow = await fetch(`${p.sandbox.url}/v21.0/dialog/oauth`, {
      method: 'POST',
      body,
      redirect: 'manual',
    });
    assert.equal(allow.status, 302);
    const location = new URL(allow.headers.get('location')!);
    assert.equal(`${location.origin}${location.pathname}`, p.redirectUri);
    assert.equal(location.searchParams.get('state'), 'st1');
    const code = location.searchParams.get('code')!;
    const client = clientFor(p);
    const info = await client.inspectToken((await client.exchangeCode(code)).accessToken);
    assert.equal(info.userId, '777');
    assert.deepEqual(info.scopes, ['business_management', 'whatsapp_business_messaging']);
  });

  test('Cancel redirects with error=access_denied and the state, no code', async (t) => {
    const p = await startTestProvider(t);
    const res = await fetch(`${p.sandbox.url}/v21.0/dialog/oauth`, {
      method: 'POST',
      body: new URLSearchParams({
        client_id: p.appId,
        redirect_uri: p.redirectUri,
        response_type: 'code',
        state: 'st2',
        decision: 'cancel',
      }),
      redirect: 'manual',
    });
    const location = new URL(res.headers.get('location')!);
    assert.equal(location.searchParams.get('error'), 'access_denied');
    assert.equal(location.searchParams.get('error_reason'), 'user_denied');
    assert.ok(location.searchParams.get('error_description'));
    assert.equal(location.searchParams.get('state'), 'st2');
    assert.equal(location.searchParams.get('code'), null);
  });

  test('the dialog asks for exactly what was requested: scope, else the configuration, else public_profile', async (t) => {
    const p = await startTestProvider(t, { permissions: ['business_management', 'ads_read'] });
    const base = { client_id: p.appId, redirect_uri: p.redirectUri, response_type: 'code' };
    const shown = async (q: Record<string, string>) =>
      [
        ...(await (await dialog(p, { ...base, ...q })).text()).matchAll(
          /name="permission" value="([a-z_]+)"/g,
        ),
      ].map((m) => m[1]);
    assert.deepEqual(await shown({ scope: 'whatsapp_business_messaging,business_management' }), [
      'whatsapp_business_messaging',
      'business_management',
    ]);
    assert.deepEqual(await shown({ config_id: 'cfg1' }), ['business_management', 'ads_read']);
    // Neither: Facebook Login grants only its default permission, never the app's whole list.
    assert.deepEqual(await shown({}), ['public_profile']);
    // Allow grants no permission the request did not ask for, whatever the form posts.
    const body = new URLSearchParams({ ...base, user_id: '778', decision: 'allow' });
    body.set('scope', 'business_management');
    body.append('permission', 'business_management');
    body.append('permission', 'whatsapp_business_messaging');
    const allow = await fetch(`${p.sandbox.url}/v21.0/dialog/oauth`, {
      method: 'POST',
      body,
      redirect: 'manual',
    });
    const code = new URL(allow.headers.get('location')!).searchParams.get('code')!;
    const client = clientFor(p);
    const info = await client.inspectToken((await client.exchangeCode(code)).accessToken);
    assert.deepEqual(info.scopes, ['business_management']);
  });

  test('an unknown client, an unregistered redirect URI or a wrong response_type: an error page, no redirect', async (t) => {
    const p = await startTestProvider(t);
    for (const q of [
      { client_id: 'nope', redirect_uri: p.redirectUri, response_type: 'code' },
      { client_id: p.appId, redirect_uri: `${p.redirectUri}/`, response_type: 'code' },
      { client_id: p.appId, redirect_uri: `${p.redirectUri}?x=1`, response_type: 'code' },
      { client_id: p.appId, redirect_uri: p.redirectUri, response_type: 'token' },
    ]) {
      const res = await dialog(p, q);
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('location'), null);
    }
  });
});

describe('sandbox provider apps page (HTTP)', () => {
  test('lists a grant; "Revoke the token" makes the token dead (190)', async (t) => {
    const p = await startTestProvider(t);
    const client = clientFor(p);
    const code = p.sandbox.authorize({ appId: p.appId, redirectUri: p.redirectUri, userId: '61' });
    const { accessToken } = await client.exchangeCode(code);
    const page = await (await fetch(`${p.sandbox.url}/sandbox/apps`)).text();
    assert.match(page, /person 61/);
    assert.match(page, /Remove the app/);
    assert.match(page, /Delete my data/);
    const res = await fetch(`${p.sandbox.url}/sandbox/grants/revoke-token`, {
      method: 'POST',
      body: new URLSearchParams({ app_id: p.appId, user_id: '61' }),
    });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /1 token\(s\) of person 61 revoked/);
    assert.equal((await client.inspectToken(accessToken)).isValid, false);
  });
});
