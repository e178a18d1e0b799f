/**
 * `tasks list`: the periodic background tasks of the service (src/jobs/background-work.ts) with
 * their period, last and next run, and failures, as every instance shares them.
 *
 * @see docs/reference/cli.md
 * @see docs/architecture.md "jobs/"
 */
import { Type } from 'typebox';
import type { BackgroundTaskStatus } from '../jobs/background-work.ts';
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

export const tasksList = defineCommand({
  name: 'tasks list',
  description: 'the periodic background tasks: period, last run, next run, failures',
  args: Type.Object({}),
  options: {},
  run: (services) => services.background.list(),
  print: (tasks) => tasks.map(taskLines).join('\n'),
});
