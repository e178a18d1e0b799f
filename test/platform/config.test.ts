import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config.ts';

test('defaults: development, 127.0.0.1:3000, ./data, embedded storage', () => {
  const c = parseConfig({});
  assert.equal(c.NODE_ENV, 'development');
  assert.equal(c.PORT, 3000);
  assert.equal(c.HOST, '127.0.0.1');
  assert.equal(c.DATABASE_URL, undefined);
  assert.match(c.dataDir, /\/data$/);
  assert.equal(c.isProduction, false);
});

test('values are converted; empty values count as unset', () => {
  const c = parseConfig({
    PORT: '8080',
    TRUST_PROXY: '10.0.0.0/8',
    LOG_LEVEL: '',
    DATABASE_URL: 'postgres://u@h/db',
  });
  assert.equal(c.PORT, 8080);
  assert.deepEqual(c.TRUST_PROXY, ['10.0.0.0/8']);
  assert.equal(c.LOG_LEVEL, 'info');
  assert.equal(c.DATABASE_URL, 'postgres://u@h/db');
});

test('a malformed value fails with one line naming the variable and what is expected', () => {
  const cases: [Record<string, string>, string][] = [
    [{ PORT: 'abc' }, 'PORT: expected a TCP port from 0 to 65535 (got "abc")'],
    [{ PORT: '70000' }, 'PORT: expected a TCP port from 0 to 65535 (got "70000")'],
    [{ NODE_ENV: 'prod' }, 'NODE_ENV: expected one of development, production, test (got "prod")'],
    [
      { TRUST_PROXY: 'yes' },
      'TRUST_PROXY: expected false, or the addresses of the proxies in front of Portico (comma-separated IPs or CIDR ranges) (got "yes")',
    ],
    [
      { TRUST_PROXY: 'true' },
      'TRUST_PROXY: true would trust every X-Forwarded-For entry, which clients can forge; set the addresses of the proxies in front of Portico (e.g. 10.0.0.0/8)',
    ],
    [
      { TRUST_PROXY: '10.0.0.0/33' },
      'TRUST_PROXY: expected false, or the addresses of the proxies in front of Portico (comma-separated IPs or CIDR ranges) (got "10.0.0.0/33")',
    ],
  ];
  for (const [env, message] of cases) {
    assert.throws(
      () => parseConfig(env),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.message, message);
        assert.ok(!err.message.includes('\n'));
        return true;
      },
    );
  }
});

test('TRUST_PROXY: off or the proxies addresses; never every hop, nor a hop count', () => {
  assert.equal(parseConfig({}).TRUST_PROXY, false);
  assert.equal(parseConfig({ TRUST_PROXY: 'false' }).TRUST_PROXY, false);
  assert.throws(() => parseConfig({ TRUST_PROXY: '1' }), /hop count cannot tell/);
  assert.deepEqual(parseConfig({ TRUST_PROXY: '10.0.0.0/8, fd00::/8,loopback' }).TRUST_PROXY, [
    '10.0.0.0/8',
    'fd00::/8',
    'loopback',
  ]);
  assert.throws(() => parseConfig({ TRUST_PROXY: 'TRUE' }), /clients can forge/);
  assert.throws(() => parseConfig({ TRUST_PROXY: '10.0.0.1/8/2' }), /TRUST_PROXY: expected/);
});

test('a secret variable is named but its value never echoed', () => {
  assert.throws(
    () => parseConfig({ DATABASE_URL: 'mysql://user:hunter2@host/db' }),
    (err: Error) =>
      err.message.startsWith('DATABASE_URL: expected') && !err.message.includes('hunter2'),
  );
});
