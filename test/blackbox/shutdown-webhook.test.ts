/**
 * Black box: the real server process stopped with SIGTERM while a tenant's webhook receiver hangs
 * on a delivery. The attempt under way is aborted rather than waited for (its 15 s timeout is
 * longer than the shutdown's), so the process exits 0 (main.ts exits 1 when the shutdown overruns
 * `SHUTDOWN_TIMEOUT_MS`), and the delivery, left queued, is sent again by the next server.
 *
 * @see docs/webhooks.md
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deadline } from '../helpers/deadlines.ts';
import { runCli, startServer, tempDataDir } from '../helpers/spawn.ts';
import { startReceiver } from '../webhooks/receiver.ts';

test('SIGTERM during a hanging webhook delivery: exit 0 in time, the delivery retried after restart', async (t) => {
  // The first delivery hangs for good; later ones are answered.
  const receiver = await startReceiver((n) => (n === 1 ? 'stall' : 204));
  t.after(() => receiver.close());
  // Shorter than the 15 s an attempt may take: waiting for the hanging one would overrun it.
  const env = { DATA_DIR: tempDataDir(), SHUTDOWN_TIMEOUT_MS: '5000' };

  const portal = await runCli(
    t,
    ['portal', 'create', '--name', 'Hooks', '--admin-email', 'hooks@acme.test', '--json'],
    env,
  );
  assert.equal(portal.code, 0, portal.stderr);
  const { token, portalCode } = JSON.parse(portal.stdout) as { token: string; portalCode: string };
  const added = await runCli(
    t,
    [
      'webhook',
      'add',
      '--portal',
      portalCode,
      '--url',
      receiver.url,
      '--events',
      'ticket.created',
      '--json',
    ],
    env,
  );
  assert.equal(added.code, 0, added.stderr);
  receiver.secrets.push((JSON.parse(added.stdout) as { secret: string }).secret);

  const first = await startServer(t, env);
  const created = await fetch(`${first.url}/api/v1/external/support/tickets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ subject: 'Printer', description: 'It is on fire.' }),
  });
  assert.equal(created.status, 201, await created.text());
  const [hung] = await receiver.waitFor(1, deadline(20_000));
  assert.equal(hung!.event?.type, 'ticket.created');

  // Past SHUTDOWN_TIMEOUT_MS main.ts exits 1; the grace before SIGKILL is longer still.
  const code = await first.stop('SIGTERM', deadline(30_000));
  assert.equal(code, 0, first.output.join('\n'));
  assert.ok(
    !first.output.some((line) => line.includes('shutdown timed out')),
    first.output.join('\n'),
  );

  const second = await startServer(t, env);
  const [, retried] = await receiver.waitFor(2, deadline(30_000));
  assert.equal(retried!.headers['webhook-id'], hung!.headers['webhook-id'], 'the same delivery');
  assert.equal(retried!.event?.type, 'ticket.created');
  assert.equal(await second.stop('SIGTERM', deadline(30_000)), 0, second.output.join('\n'));
});
