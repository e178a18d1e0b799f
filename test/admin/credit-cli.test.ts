/**
 * `credit add` as an operator runs it: against a data directory no server holds (the CLI opens
 * it), then through a running server's admin socket; the API shows the credit, the audit log
 * records it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runCli, startServer, tempDataDir } from '../helpers/spawn.ts';

describe('admin CLI: credit add', () => {
  const dataDir = tempDataDir();
  const env = { DATA_DIR: dataDir };

  test('directly, then through the running server; audited; bad amounts refused', async (t) => {
    const created = await runCli(
      t,
      [
        'portal',
        'create',
        '--name',
        'C',
        '--admin-email',
        'c@credit.test',
        '--code',
        '8201',
        '--json',
      ],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const { token } = JSON.parse(created.stdout) as { token: string };

    const direct = await runCli(
      t,
      ['credit', 'add', '--portal', '8201', '--amount', '500', '--note', 'first top-up'],
      env,
    );
    assert.equal(direct.code, 0, direct.stderr);
    assert.match(
      direct.stdout,
      /Credit added \(ctx_\w+\)\. Balance 5\.00 EUR \(500 minor units\), nothing reserved\./,
    );

    for (const amount of ['0', '-5', '1.5', 'ten']) {
      const bad = await runCli(
        t,
        ['credit', 'add', '--portal', '8201', '--amount', amount, '--note', 'x'],
        env,
      );
      assert.equal(bad.code, 1, `${amount}: ${bad.stdout}${bad.stderr}`);
      assert.match(bad.stderr, /amount/);
      assert.match(
        bad.stderr,
        /^\d+$|^-/.test(amount) ? /must be a positive whole number/ : /must be a whole number/,
      );
    }

    const server = await startServer(t, env);
    const viaServer = await runCli(
      t,
      ['credit', 'add', '--portal', '8201', '--amount', '250', '--note', 'second', '--json'],
      env,
    );
    assert.equal(viaServer.code, 0, viaServer.stderr);
    const result = JSON.parse(viaServer.stdout) as { balance: number; transactionId: string };
    assert.equal(result.balance, 750);

    const credit = await fetch(`${server.url}/api/v1/external/messaging/credit`, {
      headers: { authorization: token },
    });
    assert.deepEqual((await credit.json()).data, { balance: 750, reserved: 0, currency: 'EUR' });
    const audit = await runCli(t, ['audit', 'list', '--portal', '8201', '--json'], env);
    const actions = (JSON.parse(audit.stdout) as { action: string; reason: string }[]).filter(
      (e) => e.action === 'credit.added',
    );
    assert.equal(actions.length, 2);
    assert.ok(actions.some((e) => e.reason.includes(result.transactionId)));
  });
});
