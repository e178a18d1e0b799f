/**
 * The CLI against a server that is still starting: it holds the data directory's lock (so the
 * CLI must not open the directory) but does not listen on its admin socket yet (migrations,
 * the app's start). The CLI waits, bounded, and says so on stderr. And the other way round: a
 * server that starts while a CLI command holds the directory waits for it, saying so in its log.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startAdminSocket } from '../../src/cli/admin-socket.ts';
import { openStorage } from '../../src/db/client.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createServices } from '../../src/services.ts';
import { testConfig } from '../helpers/app.ts';
import { acquireDataDirLock } from '../../src/platform/data-dir-lock.ts';
import {
  builtEntry,
  childEnv,
  runCli,
  spawnCli,
  spawnNode,
  startServer,
  tempDataDir,
} from '../helpers/spawn.ts';

/** What the server does first: take the directory (its lock) and migrate; no socket yet. */
async function startingServer(t: { after(fn: () => Promise<void>): void }, dataDir: string) {
  const config = testConfig({ DATA_DIR: dataDir });
  const storage = await openStorage({ kind: 'pglite', dataDir: config.dataDir });
  await storage.migrate();
  const logger = createLogger('silent');
  const services = createServices({ config, storage, logger });
  let admin: Awaited<ReturnType<typeof startAdminSocket>> | undefined;
  t.after(async () => {
    await admin?.close();
    await storage.close();
  });
  return {
    services,
    /** The server's start reaches the point where it listens on the admin socket. */
    listen: async () => {
      admin = await startAdminSocket(services, logger);
    },
  };
}

test('a command sent while the server starts waits for its socket and then runs there', async (t) => {
  const dataDir = tempDataDir();
  const server = await startingServer(t, dataDir);
  const cli = spawnCli(
    t,
    ['portal', 'create', '--name', 'Early', '--admin-email', 'early@x.test', '--code', '5150'],
    { DATA_DIR: dataDir },
  );
  await cli.stderrMatches(/is starting; waiting up to 60 s/, 30_000);
  await server.listen();
  const result = await cli.exited(30_000);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /Portal 5150 created/);
  // It ran in the server's process, on the directory the server holds.
  const portal = await server.services.accounts.portalIdFor('5150');
  assert.ok(portal > 0);
});

test('the wait is bounded: a server that never opens its socket is reported', async (t) => {
  const dataDir = tempDataDir();
  await startingServer(t, dataDir);
  const cli = spawnCli(t, ['portal', 'show', '--portal', '5150'], {
    DATA_DIR: dataDir,
    CLI_SERVER_WAIT_MS: '1500',
  });
  const result = await cli.exited(30_000);
  assert.equal(result.code, 3);
  assert.match(result.stderr, /is starting; waiting up to 2 s/);
  assert.match(result.stderr, /did not open its admin socket within 2 s/);
  assert.doesNotMatch(result.stderr, /ENOENT/);
});

test('a server starting while a CLI command holds the directory waits for it, then serves', async (t) => {
  const dataDir = tempDataDir();
  // What a CLI command run on the directory does first: take its lock, as the CLI.
  const release = acquireDataDirLock(dataDir, 'cli');
  t.after(release);
  const server = spawnNode(t, builtEntry('main'), {
    env: childEnv({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir }),
  });
  const waiting = await server.waitForLine(
    /a CLI command holds the data directory; waiting up to 60 s/,
    'the server did not say it waits for the CLI',
  );
  assert.equal((JSON.parse(waiting.input) as { cliPid: number }).cliPid, process.pid);
  release();
  await server.waitForLine(/Server listening at/, 'the server did not start after the CLI');
  assert.ok(!server.output.some((l) => /in use by another Portico process/.test(l)));
});

test('a CLI command sent as the server starts: both succeed, the server keeps serving', async (t) => {
  const dataDir = tempDataDir();
  const env = { DATA_DIR: dataDir };
  const starting = startServer(t, env);
  const created = await runCli(
    t,
    ['portal', 'create', '--name', 'Early', '--admin-email', 'early@x.test', '--code', '5151'],
    env,
  );
  assert.equal(created.code, 0, created.stderr);
  const server = await starting;
  const health = await fetch(`${server.url}/healthz`);
  assert.equal(health.status, 200);
  const shown = await runCli(t, ['portal', 'show', '--portal', '5151', '--json'], env);
  assert.equal(shown.code, 0, shown.stderr);
  assert.equal(JSON.parse(shown.stdout).portalCode, '5151');
  assert.equal(server.child.exitCode, null, 'the server is still running');
});
