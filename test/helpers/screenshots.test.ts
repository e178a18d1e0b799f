/**
 * The browser suites' screenshot rule (test/helpers/browser.ts): a test process's screenshots
 * are kept only when it fails, or when `PORTICO_TEST_SCREENSHOTS=all` asks for all of them;
 * otherwise they are removed, so `test-output/` does not grow with every green run.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { keepScreenshots, settleScreenshots } from './browser.ts';

test('screenshots are kept for a failed process or PORTICO_TEST_SCREENSHOTS=all, else removed', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'portico-shots-test-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const cases = [
    { code: 0, env: {}, kept: false },
    { code: 0, env: { PORTICO_TEST_SCREENSHOTS: '' }, kept: false },
    { code: 0, env: { PORTICO_TEST_SCREENSHOTS: 'yes' }, kept: false },
    { code: 1, env: {}, kept: true },
    { code: 7, env: {}, kept: true },
    { code: 0, env: { PORTICO_TEST_SCREENSHOTS: 'all' }, kept: true },
    { code: 1, env: { PORTICO_TEST_SCREENSHOTS: 'all' }, kept: true },
  ];
  for (const [i, { code, env, kept }] of cases.entries()) {
    const label = `exit ${code}, ${JSON.stringify(env)}`;
    assert.equal(keepScreenshots(code, env), kept, label);
    const pending = join(root, `pending-${i}`);
    const target = join(root, `kept-${i}`);
    mkdirSync(pending);
    writeFileSync(join(pending, 'inbox-1280.png'), 'png');
    writeFileSync(join(pending, 'inbox-390.png'), 'png');
    settleScreenshots(pending, code, env, target);
    assert.equal(existsSync(pending), false, `${label}: the pending folder is removed`);
    assert.deepEqual(
      existsSync(target) ? readdirSync(target).sort() : [],
      kept ? ['inbox-1280.png', 'inbox-390.png'] : [],
      `${label}: screenshots ${kept ? 'kept' : 'not kept'}`,
    );
  }
});
