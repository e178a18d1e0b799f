/**
 * `tasks list`: the periodic background tasks of the service (src/jobs/background-work.ts) with
 * their period, last and next run, and failures, as every instance shares them; then the
 * background work that is not periodic (per-item jobs with their own retries, per-instance
 * timers), each with where it runs and why it is not a periodic task.
 *
 * @see docs/reference/cli.md
 * @see docs/architecture.md "jobs/"
 */
import { Type } from 'typebox';
import type { BackgroundTaskStatus, DeferredWork } from '../jobs/background-work.ts';
import { defineCommand } from './command.ts';

const seconds = (ms: number) => `${ms / 1000} s`;

function taskLines(t: BackgroundTaskStatus): string {
  const last =
    t.lastFinishedAt === null
      ? 'never run'
      : t.lastError !== null
        ? `last run ${t.lastFinishedAt} failed (${t.lastError}; ${t.consecutiveFailures} in a row)`
        : `last run ${t.lastFinishedAt} (${t.lastCount ?? 0} done, on ${t.lastInstance ?? '?'})`;
  return `${t.name}  every ${seconds(t.everyMs)}  next ${t.nextRunAt ?? 'at start'}\n  ${t.description}\n  ${last}; ${t.runs} runs`;
}

const deferredLines = (d: DeferredWork) => `${d.name}  (${d.runsOn})\n  ${d.reason}`;

export const tasksList = defineCommand({
  name: 'tasks list',
  description:
    'the periodic background tasks (period, last run, next run, failures), then the background work that is not periodic',
  args: Type.Object({}),
  options: {},
  run: async (services) => ({
    tasks: await services.background.list(),
    deferred: services.background.deferred,
  }),
  print: ({ tasks, deferred }) =>
    [
      'Periodic tasks (each run once across all instances):',
      ...tasks.map(taskLines),
      '',
      'Not periodic:',
      ...deferred.map(deferredLines),
    ].join('\n'),
});
