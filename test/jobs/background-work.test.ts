/**
 * The registry of periodic background tasks: a due task runs once across instances, a failure is
 * recorded by its code and retried next period, and operators see every task (`tasks list`).
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { sql } from 'drizzle-orm';
import { runCommand } from '../../src/cli/commands.ts';
import { createBackgroundWork, type BackgroundTask } from '../../src/jobs/background-work.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends, type Backend } from '../helpers/storage.ts';

const logger = createLogger('silent');

async function openStorage(t: TestContext, backend: Backend) {
  const storage = await backend.open();
  t.after(() => storage.close());
  return storage;
}

for (const backend of backends()) {
  describe(`background tasks (${backend.name})`, () => {
    test('two instances tick at once: a due task runs once; again once it is due again', async (t) => {
      const storage = await openStorage(t, backend);
      let runs = 0;
      const task: BackgroundTask = {
        name: 'test.count',
        description: 'counts its runs',
        everyMs: 3_600_000,
        run: async () => ++runs,
      };
      const [a, b] = ['a', 'b'].map((instanceId) =>
        createBackgroundWork({ db: storage.db, logger, tasks: [task], instanceId }),
      );
      const ticks = await Promise.all([a!.tick(), b!.tick(), a!.tick(), b!.tick()]);
      assert.equal(runs, 1, 'one run across both instances');
      assert.deepEqual(ticks.flat(), ['test.count']);
      assert.deepEqual(await Promise.all([a!.tick(), b!.tick()]), [[], []], 'not due for an hour');

      await storage.db.execute(
        sql`update background_tasks set next_run_at = now() - interval '1 second'`,
      );
      await Promise.all([a!.tick(), b!.tick()]);
      assert.equal(runs, 2);
      const [status] = await a!.list();
      assert.equal(status!.runs, 2);
      assert.equal(status!.lastCount, 2);
      assert.ok(new Date(status!.nextRunAt!).getTime() > Date.now() + 3_500_000, 'next in an hour');
    });

    test('a failure is recorded by its code, never its message, and the next success clears it', async (t) => {
      const storage = await openStorage(t, backend);
      let fail = true;
      const work = createBackgroundWork({
        db: storage.db,
        logger,
        instanceId: 'a',
        tasks: [
          {
            name: 'test.flaky',
            description: 'fails once',
            everyMs: 1_000,
            run: async () => {
              if (!fail) return 0;
              throw Object.assign(new Error('secret person +16505551234'), { code: 'ECONNRESET' });
            },
          },
        ],
      });
      await work.tick();
      let [status] = await work.list();
      assert.equal(status!.lastError, 'ECONNRESET');
      assert.equal(status!.consecutiveFailures, 1);
      assert.equal(status!.lastCount, null);
      const stored = JSON.stringify(await storage.db.execute(sql`select * from background_tasks`));
      assert.ok(!stored.includes('+16505551234'), 'the message is not stored');
      fail = false;
      assert.equal(await work.runNow('test.flaky'), 0);
      [status] = await work.list();
      assert.equal(status!.lastError, null);
      assert.equal(status!.consecutiveFailures, 0);
      await assert.rejects(work.runNow('test.none'), /no background task/);
    });

    test('the service registers its tasks, and `tasks list` shows them', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const listed = (await runCommand(services, 'tasks list', {})) as { name: string }[];
      assert.deepEqual(
        listed.map((task) => task.name),
        ['tickets.auto-close', 'conversations.sweep'],
        'no health check without a provider',
      );
    });
  });
}
