/**
 * What the browser suites share: Debian's Chromium launch arguments, the screenshot folder,
 * a free port, the admin CLI and Portico started as `npm start` would (child processes, killed
 * by the suite's cleanup, every wait with a deadline).
 */
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ROOT } from './root.ts';
import { builtEntry, spawnNode, type Hookable, type Spawned } from './spawn.ts';

/** Where the browser suites save their screenshots (people look at them). */
export const SCREENSHOTS = join(ROOT, 'test-output', 'screenshots');
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Run the admin CLI like a person would; resolves with its stdout. Killed on a deadline. */
export async function cli(
  suite: Hookable,
  env: NodeJS.ProcessEnv,
  args: string[],
  stdin?: string,
): Promise<string> {
  const run = spawnNode(suite, [...builtEntry('cli'), ...args], { env, input: stdin ?? '' });
  const code = await run.waitForExit(`cli ${args.join(' ')} did not finish`);
  if (code !== 0) throw new Error(`cli ${args.join(' ')}: ${code} ${run.stderr()}`);
  return run.stdout();
}

/** Start Portico; resolves once it logs that it is serving (with a deadline). */
export async function startPortico(suite: Hookable, env: NodeJS.ProcessEnv): Promise<Spawned> {
  const run = spawnNode(suite, builtEntry('main'), { env });
  await run.waitForLine(/Portico is serving/, 'Portico did not start');
  return run;
}

/** Save a full-page screenshot as `<name>.png` in {@link SCREENSHOTS}. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
