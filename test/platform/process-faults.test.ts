/**
 * The server process's fault policy (platform/process-faults.ts), in a real process: a
 * dependency fault that reaches the process (an unhandled rejection or an 'error' event of a
 * database connection) keeps it serving; a programming error ends it with code 1; any other
 * rejection is logged and the process keeps serving. And a real server whose Redis does not
 * answer starts, degraded, and says so on `/readyz`.
 */
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { childEnv, spawnNode, startServer, tempDataDir } from '../helpers/spawn.ts';

const FIXTURE = 'test/platform/fixtures/process-fault.ts';

async function run(t: Parameters<typeof spawnNode>[0], fault: string) {
  const child = spawnNode(t, ['--import', 'tsx', FIXTURE, fault], { env: childEnv({}) });
  const code = await child.waitForExit(`the fixture (${fault}) exits`, 30_000);
  return { code, output: child.output.join('\n') };
}

describe('the process fault policy', () => {
  for (const fault of ['database-restart', 'connection-lost', 'disk-full']) {
    test(`a dependency fault (${fault}) keeps the process up, said in one line`, async (t) => {
      const { code, output } = await run(t, fault);
      assert.equal(code, 0, output);
      assert.match(output, /alive/);
      assert.match(output, /"fault":"storage".*unavailable/);
      assert.doesNotMatch(output, /"stack"/);
    });
  }

  test('another rejection is logged with its stack; the process keeps serving', async (t) => {
    const { code, output } = await run(t, 'unknown-rejection');
    assert.equal(code, 0, output);
    assert.match(output, /an unhandled rejection; still serving/);
    assert.match(output, /alive/);
  });

  for (const fault of ['programming-error', 'programming-exception']) {
    test(`a programming error (${fault}) ends the process with code 1`, async (t) => {
      const { code, output } = await run(t, fault);
      assert.equal(code, 1, output);
      assert.match(output, /"level":60.*a programming error reached the process/);
      assert.doesNotMatch(output, /alive/);
    });
  }
});

test('a server whose Redis does not answer starts degraded and says so on /readyz', async (t) => {
  // A port nothing listens on: Redis is down.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  const server = await startServer(t, {
    DATA_DIR: tempDataDir(),
    REDIS_URL: `redis://127.0.0.1:${port}`,
  });
  const res = await fetch(`${server.url}/readyz`);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: 'degraded', degraded: ['redis'] });
});
