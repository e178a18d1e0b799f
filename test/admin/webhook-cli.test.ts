/**
 * `webhook add|list|rotate-secret|test|remove` as an operator runs them, on a data directory no
 * server holds (the CLI opens it itself), with --json and in words.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runCli, tempDataDir } from '../helpers/spawn.ts';

describe('admin CLI: webhook', () => {
  const env = { DATA_DIR: tempDataDir() };

  test('add (secret once), list, rotate-secret, test, remove; a bad URL is refused', async (t) => {
    const portal = await runCli(
      t,
      ['portal', 'create', '--name', 'W', '--admin-email', 'w@w.test', '--code', '8201'],
      env,
    );
    assert.equal(portal.code, 0, portal.stderr);
    const base = ['--portal', '8201'];
    const bad = await runCli(
      t,
      ['webhook', 'add', ...base, '--url', 'http://example.com/', '--events', 'ticket.created'],
      env,
    );
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /https:/);

    const added = await runCli(
      t,
      [
        'webhook',
        'add',
        ...base,
        '--url',
        'https://example.com/hooks',
        '--events',
        'ticket.created,contact.opted_out',
        '--json',
      ],
      env,
    );
    assert.equal(added.code, 0, added.stderr);
    const { endpoint, secret } = JSON.parse(added.stdout) as {
      endpoint: { id: string; eventTypes: string[] };
      secret: string;
    };
    assert.match(secret, /^whsec_/);
    assert.deepEqual(endpoint.eventTypes, ['ticket.created', 'contact.opted_out']);

    const listed = await runCli(t, ['webhook', 'list', ...base], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`${endpoint.id}  enabled  https://example.com/hooks`));
    assert.ok(!listed.stdout.includes(secret), 'the secret is never listed');

    const rotated = await runCli(
      t,
      ['webhook', 'rotate-secret', ...base, '--id', endpoint.id],
      env,
    );
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(rotated.stdout, /New signing secret \(shown once\): whsec_/);
    assert.match(rotated.stdout, /previous secret also signs until/);

    const tested = await runCli(t, ['webhook', 'test', ...base, '--id', endpoint.id], env);
    assert.equal(tested.code, 0, tested.stderr);
    assert.match(tested.stdout, /Queued test event evt_/);
    const after = await runCli(t, ['webhook', 'list', ...base, '--json'], env);
    const { deliveries } = JSON.parse(after.stdout) as {
      deliveries: { eventType: string; status: string }[];
    };
    assert.deepEqual(
      deliveries.map((d) => [d.eventType, d.status]),
      [['webhook.test', 'pending']],
      'queued, delivered by a running server',
    );

    const removed = await runCli(t, ['webhook', 'remove', ...base, '--id', endpoint.id], env);
    assert.equal(removed.code, 0, removed.stderr);
    const none = await runCli(t, ['webhook', 'list', ...base], env);
    assert.match(none.stdout, /No webhook endpoints/);
  });
});
