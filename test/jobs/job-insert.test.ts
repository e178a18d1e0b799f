/**
 * `jobs/job-insert.ts` writes the row pg-boss's own `send` writes, on both backends: the same
 * columns for the same options (times compared as intervals from the job's start), the queue's
 * policy and retention applied; no queue, no job.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { jobInsert, queueRow, type JobInsertOptions } from '../../src/jobs/job-insert.ts';
import { createJobQueue } from '../../src/jobs/job-queue.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

const options: JobInsertOptions = {
  retryLimit: 5,
  retryDelayS: 0,
  retryBackoff: true,
  expireInSeconds: 42,
  deadLetter: 'test.insert.dead',
};

/** Every column of a job but its id and times; times as intervals from `start_after`. */
const jobColumns = sql`name, data, priority, state, retry_limit, retry_count, retry_delay,
  retry_backoff, singleton_key, singleton_on, expire_in, dead_letter, policy, started_on,
  completed_on, output, keep_until - start_after as kept_for,
  created_on - start_after < interval '1 second' as starts_at_once`;

for (const backend of backends()) {
  describe(`job insert (${backend.name})`, () => {
    test('the row of a statement is the row of send; a missing queue inserts nothing', async (t) => {
      const storage = await backend.open();
      const jobs = createJobQueue({
        storage,
        logger: createLogger('silent'),
        maintenanceIntervalS: 60,
      });
      t.after(async () => {
        await jobs.stop();
        await storage.close();
      });
      await jobs.start();
      await jobs.boss.createQueue('test.insert.dead', { name: 'test.insert.dead' });
      await jobs.boss.createQueue('test.insert', {
        name: 'test.insert',
        policy: 'standard',
        retentionMinutes: 90,
      });
      const data = { messageId: 'msg_1', portalId: 7 };
      await jobs.boss.send('test.insert', data, {
        retryLimit: options.retryLimit,
        retryDelay: options.retryDelayS,
        retryBackoff: options.retryBackoff,
        expireInSeconds: options.expireInSeconds,
        deadLetter: 'test.insert.dead',
      });
      const insert = (queue: string) =>
        storage.db.execute(sql`with q as (${queueRow(queue)})
          ${jobInsert(sql`q`, sql`${JSON.stringify(data)}::jsonb`, options)}`);
      await insert('test.insert');
      await insert('no.such.queue');

      const rows = await queryRows<Record<string, unknown>>(
        storage,
        sql`select ${jobColumns} from pgboss.job where name = 'test.insert' order by created_on`,
      );
      assert.equal(rows.length, 2);
      assert.deepEqual(rows[1], rows[0]);
      assert.equal(rows[0]!.policy, 'standard');
      assert.deepEqual(rows[0]!.data, data);
      const other = await queryRows(
        storage,
        sql`select 1 from pgboss.job where name = 'no.such.queue'`,
      );
      assert.equal(other.length, 0);
    });
  });
}
