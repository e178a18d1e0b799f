/**
 * The admin CLI as a user runs it, on a data directory no server holds (it opens it itself).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runCli, tempDataDir } from '../helpers/spawn.ts';

describe('admin CLI', () => {
  const env = { DATA_DIR: tempDataDir() };

  test('--help on every command', async (t) => {
    for (const args of [
      [],
      ['portal', 'create'],
      ['portal', 'show'],
      ['token', 'regenerate'],
      ['token', 'scopes'],
      ['user', 'create'],
      ['user', 'sign-out'],
      ['audit', 'list'],
      ['migrate'],
    ]) {
      const res = await runCli(t, [...args, '--help'], env);
      assert.equal(res.code, 0, args.join(' '));
      assert.match(res.stdout, /Usage:/);
    }
  });

  test('portal create → user create → scopes → show → audit list', async (t) => {
    const created = await runCli(
      t,
      [
        'portal',
        'create',
        '--name',
        'Beta',
        '--admin-email',
        'Boss@Beta.test',
        '--code',
        '7001',
        '--scopes',
        'crm:contacts:read,messaging:send',
      ],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /Portal 7001 created/);
    assert.match(created.stdout, /API token \(shown once, store it now\): ptk_[0-9A-Za-z]{49}\n/);
    assert.match(created.stdout, /Scopes: messaging:send, crm:contacts:read/);

    const user = await runCli(
      t,
      ['user', 'create', '--portal', '7001', '--email', 'agent@beta.test', '--json'],
      env,
    );
    assert.equal(user.code, 0, user.stderr);
    assert.deepEqual(JSON.parse(user.stdout), {
      userId: 2,
      email: 'agent@beta.test',
      isMainAdmin: false,
      role: 'agent',
    });

    const signOut = await runCli(
      t,
      ['user', 'sign-out', '--portal', '7001', '--email', 'agent@beta.test'],
      env,
    );
    assert.equal(signOut.code, 0, signOut.stderr);
    assert.equal(signOut.stdout, 'agent@beta.test: No session was open.\n');

    const scopes = await runCli(
      t,
      ['token', 'scopes', '--portal', '7001', '--set', 'support:tickets:read', '--json'],
      env,
    );
    assert.deepEqual(JSON.parse(scopes.stdout), {
      portalCode: '7001',
      scopes: ['support:tickets:read'],
    });

    const show = await runCli(t, ['portal', 'show', '--portal', '7001', '--json'], env);
    const summary = JSON.parse(show.stdout);
    assert.deepEqual(
      summary.users.map((u: { email: string; isMainAdmin: boolean }) => [u.email, u.isMainAdmin]),
      [
        ['boss@beta.test', true],
        ['agent@beta.test', false],
      ],
    );
    assert.deepEqual(summary.token.scopes, ['support:tickets:read']);
    assert.doesNotMatch(show.stdout, /ptk_|[0-9a-f]{64}/, 'never a token or a hash');

    const audit = await runCli(t, ['audit', 'list', '--portal', '7001', '--json'], env);
    assert.deepEqual(
      JSON.parse(audit.stdout).map((e: { action: string }) => e.action),
      ['api_token.scopes_changed', 'api_token.created'],
    );
  });

  test('bad input: clear message, non-zero exit, nothing changed', async (t) => {
    const cases: [string[], RegExp, number][] = [
      [
        [
          'portal',
          'create',
          '--name',
          'X',
          '--admin-email',
          'x@x.test',
          '--scopes',
          'crm:everything',
        ],
        /Unknown scope: crm:everything\. Valid scopes: messaging:send/,
        1,
      ],
      [
        ['portal', 'create', '--name', 'X', '--admin-email', 'not-an-email'],
        /Not an email address/,
        1,
      ],
      [
        ['portal', 'create', '--name', 'X', '--admin-email', 'x@x.test', '--code', '12ab'],
        /4 to 18 digits/,
        1,
      ],
      [
        ['portal', 'create', '--name', 'X', '--admin-email', 'other@x.test', '--code', '7001'],
        /already exists/,
        1,
      ],
      [['portal', 'create', '--name', 'X'], /required option '--admin-email/, 2],
      [['token', 'regenerate', '--portal', '9999'], /No portal with code 9999/, 1],
      [
        ['user', 'create', '--portal', '7001', '--email', 'second@beta.test', '--main-admin'],
        /already has a main administrator/,
        1,
      ],
      [['token', 'scopes', '--portal', '7001', '--set', ''], /at least one scope/, 1],
      [['frobnicate'], /unknown command/, 2],
    ];
    for (const [args, message, code] of cases) {
      const res = await runCli(t, args, env);
      assert.equal(res.code, code, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, message);
      assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
    }
    const show = await runCli(t, ['portal', 'show', '--portal', '7001', '--json'], env);
    assert.equal(JSON.parse(show.stdout).users.length, 2);
  });

  test('a malformed configuration stops the CLI with one line naming the variable', async (t) => {
    const res = await runCli(t, ['portal', 'show', '--portal', '1'], {
      ...env,
      DATABASE_URL: 'mysql://nope',
    });
    assert.equal(res.code, 2);
    assert.equal(
      res.stderr.trim(),
      'error: DATABASE_URL: expected a PostgreSQL connection URL (postgres://user@host:5432/db)',
    );
  });
});
