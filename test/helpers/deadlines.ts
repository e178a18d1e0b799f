/**
 * One factor for every deadline of the tests, so that waits scale with the machine instead of
 * failing on a slow or busy one: `PORTICO_TEST_SLOWDOWN` when set (a number ≥ 1), otherwise
 * from the machine when the test process starts — fewer than 4 CPUs count proportionally (2
 * CPUs: ×2), and a 1-minute load average above the CPU count counts too (load 14 on 2 CPUs:
 * ×7), together at most ×20.
 */
import { availableParallelism, loadavg } from 'node:os';

const MAX_SLOWDOWN = 20;

/** What {@link TEST_SLOWDOWN} is from `cpus` and the 1-minute load average `load`. */
export function slowdownOf(cpus: number, load: number, setting?: string): number {
  if (setting !== undefined && setting !== '') {
    const factor = Number(setting);
    if (!Number.isFinite(factor) || factor < 1)
      throw new Error(
        `PORTICO_TEST_SLOWDOWN must be a number ≥ 1; got ${JSON.stringify(setting)}.`,
      );
    return factor;
  }
  const fewerCpus = Math.max(1, 4 / cpus);
  const busy = Math.max(1, load / cpus);
  return Math.min(MAX_SLOWDOWN, Math.round(fewerCpus * busy * 10) / 10);
}

/** The factor of this test process (see the module comment). */
export const TEST_SLOWDOWN = slowdownOf(
  availableParallelism(),
  loadavg()[0] ?? 0,
  process.env.PORTICO_TEST_SLOWDOWN,
);

/** `ms` (a deadline on a quiet 4-CPU machine) scaled by {@link TEST_SLOWDOWN}, in ms. */
export function deadline(ms: number): number {
  return Math.round(ms * TEST_SLOWDOWN);
}
