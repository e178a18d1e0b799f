/**
 * `key create|list|rotate|revoke` as an operator runs them: the built CLI as a process, handing
 * its commands to a running server over the admin socket; the keys it makes are tried over HTTP
 * against that server (a created key works, a revoked one stops at once), the changes are
 * audited as the CLI, and bad input is refused with the CLI's exit statuses (1 refused, 2 usage).
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import {
  runCli,
  startServer,
  suiteCleanup,
  tempDataDir,
  type RunningServer,
} from '../helpers/spawn.ts';

const VERIFY = '/api/v1/external/auth/verify';

interface KeyJson {
  id: number;
  name: string;
  hint: string;
  scopes: string[];
  expiresAt: string | null;
  allowedIps: string[] | null;
}

describe('admin CLI: key', () => {
  const env = { DATA_DIR: tempDataDir() };
  const suite = suiteCleanup();
  after(() => suite.run());
  let server: RunningServer;
  const code = '8301';
  const verify = (secret: string) =>
    fetch(`${server.url}${VERIFY}`, { headers: { authorization: secret } });

  test('create (secret once), list, rotate, revoke through the running server', async (t) => {
    server = await startServer(suite, env);
    const portal = await runCli(
      t,
      ['portal', 'create', '--name', 'K', '--admin-email', 'k@k.test', '--code', code],
      env,
    );
    assert.equal(portal.code, 0, portal.stderr);

    const created = await runCli(
      t,
      [
        'key',
        'create',
        '--portal',
        code,
        '--name',
        'billing export',
        '--scopes',
        'support:tickets:read, crm:contacts:read',
        '--expires-at',
        '2099-01-31T00:00:00Z',
        '--json',
      ],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const { key, secret } = JSON.parse(created.stdout) as { key: KeyJson; secret: string };
    assert.match(secret, /^ptk_/);
    assert.deepEqual([...key.scopes].sort(), ['crm:contacts:read', 'support:tickets:read']);
    assert.equal(key.expiresAt, '2099-01-31T00:00:00.000Z');
    assert.equal(key.allowedIps, null);
    assert.equal((await verify(secret)).status, 200, 'the new key works at once');

    const words = await runCli(
      t,
      [
        'key',
        'create',
        '--portal',
        code,
        '--name',
        'office only',
        '--scopes',
        'support:tickets:read',
        '--allowed-ips',
        '203.0.113.0/24',
      ],
      env,
    );
    assert.equal(words.code, 0, words.stderr);
    assert.match(
      words.stdout,
      /office only .*support:tickets:read .*never expires .*from 203\.0\.113\.0\/24/,
    );
    const officeSecret = /shown once, store it now\): (ptk_\S+)/.exec(words.stdout)?.[1];
    assert.ok(officeSecret, words.stdout);
    assert.equal((await verify(officeSecret)).status, 403, 'refused from 127.0.0.1');

    const listed = await runCli(t, ['key', 'list', '--portal', code], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${key.id}  billing export  …${key.hint}  `, 'm'));
    assert.match(listed.stdout, /expires 2099-01-31 00:00 UTC/);
    assert.ok(!listed.stdout.includes(secret), 'a secret is never listed');
    const listedJson = JSON.parse(
      (await runCli(t, ['key', 'list', '--portal', code, '--json'], env)).stdout,
    ) as KeyJson[];
    assert.ok(listedJson.some((k) => k.id === key.id && k.name === 'billing export'));

    const rotated = await runCli(
      t,
      ['key', 'rotate', '--portal', code, String(key.id), '--overlap', '3600', '--json'],
      env,
    );
    assert.equal(rotated.code, 0, rotated.stderr);
    const fresh = (JSON.parse(rotated.stdout) as { secret: string }).secret;
    assert.equal((await verify(fresh)).status, 200);
    assert.equal((await verify(secret)).status, 200, 'the previous secret works for the overlap');

    const revoked = await runCli(t, ['key', 'revoke', '--portal', code, String(key.id)], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(revoked.stdout.trim(), `API key ${key.id} revoked; it no longer works.`);
    assert.equal((await verify(fresh)).status, 401, 'revoked: refused at once');
    assert.equal((await verify(secret)).status, 401);

    const audit = await runCli(t, ['audit', 'list', '--portal', code, '--json'], env);
    const events = JSON.parse(audit.stdout) as {
      action: string;
      actorType: string;
      actorId: string;
    }[];
    for (const action of ['api_key.created', 'api_key.rotated', 'api_key.revoked']) {
      const event = events.find((e) => e.action === action);
      assert.ok(event, `${action} audited`);
      assert.deepEqual([event.actorType, event.actorId], ['system', 'cli'], 'as the CLI');
    }
    assert.ok(!audit.stdout.includes(secret) && !audit.stdout.includes(fresh));
  });

  test('refusals: exit 1 for bad input or an unknown key, exit 2 for a bad command line', async (t) => {
    const refused: [string[], RegExp][] = [
      [['create', '--name', 'x', '--scopes', 'no:such'], /scope/i],
      [
        ['create', '--name', 'x', '--scopes', 'support:tickets:read', '--expires-at', 'soon'],
        /ISO 8601/,
      ],
      [
        ['create', '--name', 'x', '--scopes', 'support:tickets:read', '--allowed-ips', '300.1.1.1'],
        /300\.1\.1\.1/,
      ],
      [['revoke', '999999'], /No API key 999999/],
    ];
    for (const [args, message] of refused) {
      const [sub, ...rest] = args;
      const res = await runCli(t, ['key', sub!, '--portal', code, ...rest], env);
      assert.equal(res.code, 1, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, /^error: /);
      assert.match(res.stderr, message);
    }
    const json = await runCli(t, ['key', 'revoke', '--portal', code, '999999', '--json'], env);
    assert.equal(json.code, 1);
    assert.equal((JSON.parse(json.stderr) as { error: { code: string } }).error.code, 'not_found');

    const unknownPortal = await runCli(t, ['key', 'list', '--portal', '99999999'], env);
    assert.equal(unknownPortal.code, 1);
    assert.match(unknownPortal.stderr, /No portal with code 99999999/);

    for (const args of [
      ['key', 'revoke', '--portal', code],
      ['key', 'revoke', '--portal', code, 'abc'],
      ['key', 'create', '--portal', code, '--name', 'x'],
    ]) {
      const res = await runCli(t, args, env);
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
    }
    const listed = await runCli(t, ['key', 'list', '--portal', code, '--json'], env);
    assert.equal(
      (JSON.parse(listed.stdout) as KeyJson[]).filter((k) => k.name === 'x').length,
      0,
      'nothing was created by a refused command',
    );
  });
});
