/**
 * Development logs are for a person when stdout is a terminal (pino-pretty), JSON lines
 * otherwise. The terminal case runs the built server under `script(1)`, which gives it a real
 * pseudo-terminal; the process group is killed in `t.after` and every wait has a deadline.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { wantsPrettyLogs } from '../../src/platform/logger.ts';
import { freePort } from '../helpers/browser.ts';
import { builtEntry, spawnNode } from '../helpers/spawn.ts';

const DEADLINE_MS = 60_000;

function developmentEnv(port: number): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    PORT: String(port),
    SANDBOX_PROVIDER_PORT: '0',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'portico-pretty-')),
  };
}

describe('development logs', () => {
  test('pretty only outside production and only on a terminal', () => {
    assert.equal(wantsPrettyLogs(false, true), true);
    assert.equal(wantsPrettyLogs(false, false), false);
    assert.equal(wantsPrettyLogs(false, undefined), false);
    assert.equal(wantsPrettyLogs(true, true), false);
  });

  test('npm start on a terminal prints readable lines with the sign-in address', async (t) => {
    const port = await freePort();
    const command = ['node', ...builtEntry('main')].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qefc', command, '/dev/null'], {
      env: developmentEnv(port),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.after(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const deadline = Date.now() + DEADLINE_MS;
    while (!/Portico is serving/.test(output)) {
      assert.ok(Date.now() < deadline, `no start-up line within ${DEADLINE_MS} ms:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 200)); // the fields after the message line
    const plain = output.replace(/\x1b\[[0-9;]*m/g, ''); // eslint-disable-line no-control-regex
    assert.match(plain, /INFO.*Portico is serving/);
    assert.match(plain, new RegExp(`signIn: "http://localhost:${port}/login"`));
    assert.doesNotMatch(plain, /^\{"level"/m, 'no JSON line on a terminal');
  });

  test('piped, the same start writes JSON lines', async (t) => {
    const port = await freePort();
    const run = spawnNode(t, builtEntry('main'), { env: developmentEnv(port) });
    await run.waitForLine(/Portico is serving/, 'the server did not start');
    const line = run
      .stdout()
      .split('\n')
      .find((l) => l.includes('Portico is serving'))!;
    const parsed = JSON.parse(line) as { signIn: string };
    assert.equal(parsed.signIn, `http://localhost:${port}/login`);
  });
});
