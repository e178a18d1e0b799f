import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig, providerSettings } from '../../src/config.ts';

const KEY = `k1:${randomBytes(32).toString('base64')}`;
const SECRET = 'a-real-provider-app-secret-0123456789';

/** A production environment that starts; each case breaks one rule. */
const GOOD = {
  NODE_ENV: 'production',
  DATA_DIR: '/var/lib/portico',
  APP_BASE_URL: 'https://portico.example.com',
  TOKEN_ENCRYPTION_KEYS: KEY,
  PROVIDER_AUTHORIZATION_BASE_URL: 'https://www.facebook.com',
  PROVIDER_GRAPH_BASE_URL: 'https://graph.facebook.com',
  PROVIDER_APP_ID: '1234567890',
  PROVIDER_APP_SECRET: SECRET,
  PROVIDER_REDIRECT_URI: 'https://portico.example.com/api/auth/partner/callback',
  PROVIDER_WEBHOOK_VERIFY_TOKEN: 'a-webhook-verify-token-0123',
};

function refusal(env: Record<string, string | undefined>): string {
  try {
    parseConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    assert.ok(!err.message.includes(SECRET), 'a refusal never echoes the secret');
    assert.ok(!err.message.includes(KEY), 'a refusal never echoes a key');
    assert.equal(err.message.split('\n').length, 1, 'one line');
    return err.message;
  }
  assert.fail('expected start-up to be refused');
}

describe('provider configuration', () => {
  test('a complete production configuration starts', () => {
    const config = parseConfig(GOOD);
    assert.equal(config.PROVIDER_API_VERSION, 'v21.0');
    assert.equal(config.PROVIDER_TIMEOUT_MS, 10_000);
    assert.equal(config.SANDBOX_PROVIDER_PORT, 3001);
    assert.deepEqual(providerSettings(config)?.requiredPermissions, [
      'business_management',
      'whatsapp_business_messaging',
      'whatsapp_business_management',
    ]);
  });

  test('PROVIDER_PKCE: on by default outside production, off in production unless set', () => {
    const dev = { PROVIDER_APP_ID: '42', PROVIDER_APP_SECRET: SECRET };
    assert.equal(providerSettings(parseConfig({ NODE_ENV: 'development', ...dev }))?.pkce, true);
    assert.equal(providerSettings(parseConfig({ NODE_ENV: 'test', ...dev }))?.pkce, true);
    assert.equal(
      providerSettings(parseConfig({ NODE_ENV: 'development', ...dev, PROVIDER_PKCE: 'false' }))
        ?.pkce,
      false,
    );
    assert.equal(providerSettings(parseConfig(GOOD))?.pkce, false);
    assert.equal(providerSettings(parseConfig({ ...GOOD, PROVIDER_PKCE: 'true' }))?.pkce, true);
    assert.match(
      refusal({ ...GOOD, PROVIDER_PKCE: 'yes' }),
      /^PROVIDER_PKCE: expected true or false/,
    );
  });

  test('development defaults: APP_BASE_URL follows PORT, redirect URI derived from it', () => {
    const config = parseConfig({ NODE_ENV: 'development', PORT: '4100' });
    assert.equal(config.APP_BASE_URL, 'http://localhost:4100');
    assert.equal(providerSettings(config), null, 'no app id: not configured');
    const withApp = parseConfig({
      NODE_ENV: 'development',
      PORT: '4100',
      PROVIDER_APP_ID: '42',
      PROVIDER_APP_SECRET: SECRET,
    });
    assert.equal(
      providerSettings(withApp)?.redirectUri,
      'http://localhost:4100/api/auth/partner/callback',
    );
  });

  test('PROVIDER_API_VERSION must look like v21.0', () => {
    for (const bad of ['21.0', 'v21', 'v21.0/../x', 'V21.0'])
      assert.match(refusal({ ...GOOD, PROVIDER_API_VERSION: bad }), /^PROVIDER_API_VERSION:/);
  });

  test('malformed or short encryption keys are refused without echoing them', () => {
    const short = `k1:${randomBytes(16).toString('base64')}`;
    assert.match(refusal({ ...GOOD, TOKEN_ENCRYPTION_KEYS: short }), /32 bytes/);
    assert.match(refusal({ ...GOOD, TOKEN_ENCRYPTION_KEYS: `${KEY},${KEY}` }), /appears twice/);
  });

  const cases: [string, Record<string, string | undefined>, RegExp][] = [
    ['missing keys', { TOKEN_ENCRYPTION_KEYS: undefined }, /^TOKEN_ENCRYPTION_KEYS: required/],
    [
      'a key file inside DATA_DIR',
      { TOKEN_ENCRYPTION_KEYS: undefined, TOKEN_ENCRYPTION_KEY_FILE: '/var/lib/portico/k' },
      /^TOKEN_ENCRYPTION_KEY_FILE: must be outside DATA_DIR/,
    ],
    ['missing APP_BASE_URL', { APP_BASE_URL: undefined }, /^APP_BASE_URL: required/],
    ['missing app id', { PROVIDER_APP_ID: undefined }, /^PROVIDER_APP_ID: required/],
    ['missing app secret', { PROVIDER_APP_SECRET: undefined }, /^PROVIDER_APP_SECRET: required/],
    [
      'missing webhook verify token',
      { PROVIDER_WEBHOOK_VERIFY_TOKEN: undefined },
      /^PROVIDER_WEBHOOK_VERIFY_TOKEN: required in production/,
    ],
    [
      'missing redirect URI',
      { PROVIDER_REDIRECT_URI: undefined },
      /^PROVIDER_REDIRECT_URI: required/,
    ],
    [
      'an http: redirect URI',
      {
        APP_BASE_URL: 'https://portico.example.com',
        PROVIDER_REDIRECT_URI: 'http://portico.example.com/api/auth/partner/callback',
      },
      /^PROVIDER_REDIRECT_URI: must use https:/,
    ],
    [
      'a redirect URI with a query',
      { PROVIDER_REDIRECT_URI: 'https://portico.example.com/api/auth/partner/callback?x=1' },
      /^PROVIDER_REDIRECT_URI: must be exactly https:\/\/portico\.example\.com\/api\/auth\/partner\/callback/,
    ],
    [
      'a redirect URI with a trailing slash',
      { PROVIDER_REDIRECT_URI: 'https://portico.example.com/api/auth/partner/callback/' },
      /^PROVIDER_REDIRECT_URI: must be exactly/,
    ],
    [
      'a redirect URI on another host',
      { PROVIDER_REDIRECT_URI: 'https://evil.example.com/api/auth/partner/callback' },
      /^PROVIDER_REDIRECT_URI: must be exactly/,
    ],
    [
      'a redirect URI on another path',
      { PROVIDER_REDIRECT_URI: 'https://portico.example.com/authorized' },
      /^PROVIDER_REDIRECT_URI: must be exactly/,
    ],
    [
      'the sandbox provider (loopback graph URL)',
      { PROVIDER_GRAPH_BASE_URL: 'https://127.0.0.1:3001' },
      /^PROVIDER_GRAPH_BASE_URL: points at the sandbox provider/,
    ],
    [
      'the sandbox provider (localhost dialog)',
      { PROVIDER_AUTHORIZATION_BASE_URL: 'https://localhost:3001' },
      /^PROVIDER_AUTHORIZATION_BASE_URL: points at the sandbox provider/,
    ],
    [
      'the sandbox provider (http dialog)',
      { PROVIDER_AUTHORIZATION_BASE_URL: 'http://127.0.0.1:3001' },
      /^PROVIDER_AUTHORIZATION_BASE_URL: must use https:/,
    ],
    [
      'the sandbox provider (localhost with a trailing dot)',
      { PROVIDER_GRAPH_BASE_URL: 'https://localhost.:4200' },
      /^PROVIDER_GRAPH_BASE_URL: points at the sandbox provider/,
    ],
    [
      'the sandbox provider (IPv4-mapped IPv6 loopback)',
      { PROVIDER_GRAPH_BASE_URL: 'https://[::ffff:127.0.0.1]:4200' },
      /^PROVIDER_GRAPH_BASE_URL: points at the sandbox provider/,
    ],
    [
      'the sandbox provider (IPv6 loopback)',
      { PROVIDER_AUTHORIZATION_BASE_URL: 'https://[::1]:4200' },
      /^PROVIDER_AUTHORIZATION_BASE_URL: points at the sandbox provider/,
    ],
    [
      'a key file that does not exist',
      { TOKEN_ENCRYPTION_KEYS: undefined, TOKEN_ENCRYPTION_KEY_FILE: '/nonexistent/portico-keys' },
      /^TOKEN_ENCRYPTION_KEY_FILE: the file does not exist/,
    ],
    [
      "the sandbox provider's generated app id",
      { PROVIDER_APP_ID: 'sandboxAbc123' },
      /^PROVIDER_APP_ID: is the sandbox provider's app/,
    ],
  ];
  for (const [name, change, expected] of cases) {
    test(`production refuses to start: ${name}`, () => {
      assert.match(refusal({ ...GOOD, ...change }), expected);
    });
  }
});
