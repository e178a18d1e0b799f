/**
 * The support commands: `agent create|list|disable` as an operator runs them (the built CLI,
 * the password on standard input), and `tickets list|show|reply|status` through the same
 * command table on both backends.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hashApiToken } from '../../src/accounts/api-token.ts';
import { runCommand } from '../../src/cli/commands.ts';
import { AppError, UsageError } from '../../src/platform/errors.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { runCli, tempDataDir } from '../helpers/spawn.ts';
import { backends } from '../helpers/storage.ts';

const PASSWORD = 'correct horse battery staple';

describe('agent commands (built CLI)', () => {
  const env = { DATA_DIR: tempDataDir() };

  test('create with the password on standard input, list, disable', async (t) => {
    const created = await runCli(
      t,
      ['agent', 'create', '--email', 'Lin@Operator.test', '--name', 'Lin', '--json'],
      env,
      `${PASSWORD}\n`,
    );
    assert.equal(created.code, 0, created.stderr);
    const agent = JSON.parse(created.stdout);
    assert.equal(agent.email, 'lin@operator.test');
    assert.equal(agent.name, 'Lin');
    assert.ok(!created.stdout.includes(PASSWORD) && !created.stderr.includes(PASSWORD));

    const again = await runCli(
      t,
      ['agent', 'create', '--email', 'lin@operator.test', '--name', 'Lin 2'],
      env,
      `${PASSWORD}\n`,
    );
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists/);
    const short = await runCli(
      t,
      ['agent', 'create', '--email', 'x@operator.test', '--name', 'X'],
      env,
      'short\n',
    );
    assert.equal(short.code, 1);
    assert.match(short.stderr, /at least 12/);

    const listed = await runCli(t, ['agent', 'list'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /lin@operator\.test {2}Lin/);
    const disabled = await runCli(t, ['agent', 'disable', '--email', 'lin@operator.test'], env);
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.match(disabled.stdout, /disabled/);
    const tickets = await runCli(t, ['tickets', 'list'], env);
    assert.equal(tickets.code, 0, tickets.stderr);
    assert.equal(tickets.stdout.trim(), 'No tickets.');
  });
});

for (const backend of backends()) {
  describe(`tickets commands (${backend.name})`, () => {
    test('list, show, reply, internal note, status; refusals are clear', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const principal = (await services.accounts.principalForTokenHash(
        hashApiToken(portal.token),
      ))!;
      const { body } = await services.tickets.createTicket({
        principal,
        input: { subject: 'From a script', description: 'Please look.' },
      });
      const id = body.data.id;
      await runCommand(services, 'agent create', {
        email: 'ops@operator.test',
        name: 'Ops',
        password: PASSWORD,
      });

      const listed = (await runCommand(services, 'tickets list', { status: 'new' })) as {
        id: string;
      }[];
      assert.deepEqual(
        listed.map((x) => x.id),
        [id],
      );
      await runCommand(services, 'tickets reply', {
        id,
        agent: 'ops@operator.test',
        text: 'Looking now.',
        internal: false,
      });
      await runCommand(services, 'tickets reply', {
        id,
        agent: 'ops@operator.test',
        text: 'customer on the old plan',
        internal: true,
      });
      const solved = (await runCommand(services, 'tickets status', {
        id,
        agent: 'ops@operator.test',
        status: 'solved',
      })) as { status: string; timeToSolveMs: number };
      assert.equal(solved.status, 'solved');
      assert.ok(solved.timeToSolveMs >= 0);
      const shown = (await runCommand(services, 'tickets show', { id })) as {
        thread: { kind: string }[];
      };
      assert.deepEqual(
        shown.thread.map((e) => e.kind),
        ['comment', 'note'],
      );
      // The customer sees the reply only.
      const thread = await services.tickets.listComments(principal, id, { limit: 10 });
      assert.deepEqual(
        thread.items.map((c) => c.body),
        ['Looking now.'],
      );

      for (const [name, args, message] of [
        ['tickets show', { id: 'tkt_nope' }, /No ticket/],
        [
          'tickets reply',
          { id, agent: 'who@operator.test', text: 'x', internal: false },
          /No enabled agent/,
        ],
        ['tickets status', { id, agent: 'ops@operator.test', status: 'closed' }, /must be/],
      ] as const) {
        await assert.rejects(runCommand(services, name, args), (err: unknown) => {
          // A refusal the CLI prints with its code and exits 1 for (cli/failure.ts).
          assert.ok(err instanceof UsageError || err instanceof AppError, String(err));
          assert.notEqual(err.code, 'internal_error');
          assert.match(err.message, message);
          return true;
        });
      }
    });
  });
}
