/**
 * The registry of periodic background tasks: a due task runs once across instances, a failure is
 * recorded by its code and retried next period, and operators see every task (`tasks list`).
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { sql } from 'drizzle-orm';
import { commandNamed, runCommand } from '../../src/cli/commands.ts';
import {
  createBackgroundWork,
  type BackgroundTask,
  type BackgroundTaskStatus,
  type DeferredWork,
} from '../../src/jobs/background-work.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { openInstances } from '../helpers/instances.ts';
import { backends, type Backend } from '../helpers/storage.ts';

const logger = createLogger('silent');

/** What `tasks list` returns. */
type TasksListed = { tasks: BackgroundTaskStatus[]; deferred: DeferredWork[] };

/** The service's periodic tasks without a provider, in registration order. */
const ALL_TASKS = [
  'tickets.auto-close',
  'conversations.sweep',
  'messaging.settlement',
  'webhooks.event-retention',
  'sessions.expire',
  'idempotency.expire',
  'partner.signed-requests-expire',
];

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

    test('the service registers its tasks, and `tasks list` shows them with the work that is not periodic', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const listed = (await runCommand(services, 'tasks list', {})) as TasksListed;
      assert.deepEqual(
        listed.tasks.map((task) => task.name),
        ALL_TASKS,
        'no health check without a provider',
      );
      assert.deepEqual(
        listed.deferred.map((d) => d.name),
        [
          'message.send',
          'message.statuses',
          'webhook.deliver',
          'campaign.runner',
          'job-queue.maintenance',
          'partner.grant-revocation',
          'accounts.key-usage-flush',
        ],
      );
      for (const d of listed.deferred) assert.ok(d.reason.length > 20, `${d.name} says why`);
    });

    test('every registered task runs once across two instances; `tasks list` shows last run, next run and failures', async (t) => {
      const [a, b] = await openInstances(t, backend, 2);
      const db = a!.services.storage.db;
      const { portalId, userId } = await createPortal(a!.services);
      // Something due for each expiry task.
      await a!.services.sessions.create(userId);
      await db.execute(sql`update sessions set expires_at = now() - interval '1 second'`);
      await db.execute(sql`
        insert into idempotency_keys (portal_id, key, request_hash, expires_at)
        values (${portalId}, 'k-old', 'h', now() - interval '1 second'),
               (${portalId}, 'k-live', 'h', now() + interval '1 hour')`);
      await db.execute(sql`
        insert into processed_signed_requests (callback, fingerprint, provider_user_id, expires_at)
        values ('deauthorize', 'f-old', 'u', now() - interval '1 second'),
               ('deauthorize', 'f-live', 'u', now() + interval '1 hour')`);

      const ticks = await Promise.all([
        a!.services.background.tick(),
        b!.services.background.tick(),
        a!.services.background.tick(),
        b!.services.background.tick(),
      ]);
      assert.deepEqual(ticks.flat().sort(), [...ALL_TASKS].sort(), 'each task ran exactly once');

      const listed = (await runCommand(b!.services, 'tasks list', {})) as TasksListed;
      const byName = new Map(listed.tasks.map((task) => [task.name, task]));
      for (const name of ALL_TASKS) {
        const task = byName.get(name)!;
        assert.equal(task.runs, 1, `${name} ran once`);
        assert.equal(task.lastError, null, `${name} did not fail`);
        assert.equal(task.consecutiveFailures, 0);
        assert.ok(task.lastFinishedAt, `${name} shows its last run`);
        assert.ok(
          new Date(task.nextRunAt!).getTime() >=
            new Date(task.lastStartedAt!).getTime() + task.everyMs - 1_000,
          `${name}'s next run is one period on`,
        );
      }
      assert.equal(byName.get('sessions.expire')!.lastCount, 1);
      assert.equal(byName.get('idempotency.expire')!.lastCount, 1);
      assert.equal(byName.get('partner.signed-requests-expire')!.lastCount, 1);
      const left = await db.execute(sql`
        select (select count(*) from sessions)::int as sessions,
          (select count(*) from idempotency_keys)::int as keys,
          (select count(*) from processed_signed_requests)::int as signed`);
      assert.deepEqual((left as { rows: unknown[] }).rows[0], {
        sessions: 0,
        keys: 1,
        signed: 1,
      });

      // A recorded failure, as the operator reads it.
      await db.execute(sql`
        update background_tasks set last_error = 'ECONNRESET', consecutive_failures = 2,
          last_count = null where name = 'webhooks.event-retention'`);
      const printed = commandNamed('tasks list').print(
        await runCommand(a!.services, 'tasks list', {}),
        { options: {}, storage: () => 'test' },
      );
      assert.match(printed, /^sessions\.expire {2}every 3600 s {2}next \d{4}-/m);
      assert.match(printed, /last run \S+ \(1 done, on [^)]+\); 1 runs/);
      assert.match(printed, /webhooks\.event-retention[^]*?failed \(ECONNRESET; 2 in a row\)/);
      assert.match(printed, /Not periodic:\nmessage\.send {2}\(messages table\)/);
    });
  });
}
