/**
 * The production retry schedule is the one docs/webhooks.md promises receivers, and a
 * `Retry-After` moves a retry only within the schedule's bounds.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { nextDelayMs, RETRY_SCHEDULE_MS } from '../../src/webhooks/webhook-delivery.ts';
import { ROOT } from '../helpers/root.ts';

const UNIT_MS: Record<string, number> = { s: 1_000, min: 60_000, h: 3_600_000 };

test('the production retry schedule is the documented one', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'webhooks.md'), 'utf8').replace(/\s+/g, ' ');
  const listed = /Standard Webhooks schedule: (immediately(?:, \d+ (?:s|min|h))+)/.exec(doc);
  assert.ok(listed, 'docs/webhooks.md lists the schedule');
  const documented = listed[1]!.split(', ').map((step) => {
    if (step === 'immediately') return 0;
    const [n, unit] = step.split(' ');
    return Number(n) * UNIT_MS[unit!]!;
  });
  assert.deepEqual(RETRY_SCHEDULE_MS, documented);
});

test('Retry-After lengthens a wait up to the longest wait of the schedule, never shortens it', () => {
  const noAnswer = { retryAfterMs: null };
  assert.equal(nextDelayMs(RETRY_SCHEDULE_MS, 1, noAnswer), 5_000);
  assert.equal(nextDelayMs(RETRY_SCHEDULE_MS, 1, { retryAfterMs: 1_000 }), 5_000);
  assert.equal(nextDelayMs(RETRY_SCHEDULE_MS, 1, { retryAfterMs: 120_000 }), 120_000);
  // A day asked for: the schedule's longest wait (10 h).
  assert.equal(nextDelayMs(RETRY_SCHEDULE_MS, 1, { retryAfterMs: 86_400_000 }), 36_000_000);
  assert.equal(nextDelayMs(RETRY_SCHEDULE_MS, 8, { retryAfterMs: 1_000 }), null);
});
