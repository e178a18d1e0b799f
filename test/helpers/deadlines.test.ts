/** The tests' deadline factor: from the machine (CPUs, load), or set; a bad setting is refused. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { slowdownOf } from './deadlines.ts';

test('deadlines scale with fewer CPUs and with the load, within bounds; a setting wins', () => {
  assert.equal(slowdownOf(4, 0.5), 1);
  assert.equal(slowdownOf(16, 3), 1);
  assert.equal(slowdownOf(2, 1), 2);
  assert.equal(slowdownOf(2, 14), 14);
  assert.equal(slowdownOf(1, 100), 20);
  assert.equal(slowdownOf(2, 14, '3'), 3);
  assert.equal(slowdownOf(2, 14, ''), 14);
  for (const bad of ['0.5', 'fast', '-1'])
    assert.throws(() => slowdownOf(4, 0, bad), /PORTICO_TEST_SLOWDOWN must be/, bad);
});
