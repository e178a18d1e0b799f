/**
 * What the browser suites share: Debian's Chromium launch arguments, the screenshot folder,
 * a free port, a development Portico's sandbox and environment, the admin CLI and Portico
 * started as `npm start` would (child processes, killed by the suite's cleanup, every wait with
 * a deadline).
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { ROOT } from './root.ts';
import {
  startSandboxProvider,
  type SandboxProvider,
} from '../../src/sandbox-provider/sandbox-provider.tsx';
import { builtEntry, spawnedServerEnv, spawnNode, type Hookable, type Spawned } from './spawn.ts';

/**
 * Where the browser suites' screenshots are kept (people look at them): only those of a test
 * process that failed, or all with `PORTICO_TEST_SCREENSHOTS=all`.
 */
export const SCREENSHOTS = join(ROOT, 'test-output', 'screenshots');
/** This process's screenshots until it exits (then kept or removed; see {@link SCREENSHOTS}). */
let pendingShots: string | undefined;
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

/**
 * Take a full-page screenshot `<name>.png`; it lands in {@link SCREENSHOTS} when this test
 * process ends with a failure (or `PORTICO_TEST_SCREENSHOTS=all`), and is deleted otherwise.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (pendingShots === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'portico-shots-'));
    pendingShots = dir;
    process.once('exit', (code) => settleScreenshots(dir, code, process.env));
  }
  await page.screenshot({ path: join(pendingShots, `${name}.png`), fullPage: true });
}

/**
 * Whether a test process's screenshots are kept: when it ends with a failure (exit code not 0)
 * or when `PORTICO_TEST_SCREENSHOTS` is `all` (README.md, the test knobs).
 */
export function keepScreenshots(exitCode: number, env: NodeJS.ProcessEnv): boolean {
  return exitCode !== 0 || env.PORTICO_TEST_SCREENSHOTS === 'all';
}

/**
 * At a test process's exit: copy the screenshots of `pending` into `kept` (by default
 * {@link SCREENSHOTS}) when {@link keepScreenshots} says so, then remove `pending` either way.
 */
export function settleScreenshots(
  pending: string,
  exitCode: number,
  env: NodeJS.ProcessEnv,
  kept = SCREENSHOTS,
): void {
  if (keepScreenshots(exitCode, env)) {
    mkdirSync(kept, { recursive: true });
    for (const file of readdirSync(pending)) cpSync(join(pending, file), join(kept, file));
  }
  rmSync(pending, { recursive: true, force: true });
}

/** The two widths every page is checked at: a laptop and a phone (CSS pixels). */
export const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

/**
 * What is wrong with the page as shown: horizontal overflow of the page or of a card, a word
 * broken inside a table cell's short value (any cell but the kit's `long` ones: ids, URLs),
 * and every axe-core violation of impact serious or critical. [] when nothing is.
 *
 * @see https://github.com/dequelabs/axe-core/blob/develop/doc/API.md#results-object
 */
export async function pageProblems(page: Page): Promise<string[]> {
  const layout = await page.evaluate(() => {
    const found: string[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > window.innerWidth)
      found.push(`page ${root.scrollWidth}px wide > ${window.innerWidth}px`);
    for (const el of Array.from(document.querySelectorAll('section, header, .card'))) {
      const box = el as HTMLElement;
      if (box.scrollWidth > box.clientWidth + 1)
        found.push(`${box.tagName.toLowerCase()} ${box.scrollWidth}px > ${box.clientWidth}px`);
    }
    for (const td of Array.from(document.querySelectorAll('td:not(.long)'))) {
      const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? '';
        for (const m of text.matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(node, m.index);
          range.setEnd(node, m.index + m[0].length);
          const lines = new Set(
            Array.from(range.getClientRects())
              .filter((r) => r.width > 0)
              .map((r) => Math.round(r.top)),
          );
          if (lines.size > 1) found.push(`"${m[0]}" broken over ${lines.size} lines in a cell`);
        }
      }
    }
    return found;
  });
  const axe = await new AxeBuilder({ page }).analyze();
  const serious = axe.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `axe ${v.impact} ${v.id}: ${v.help} (${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join('; ')})`,
    );
  return [...layout, ...serious];
}

/** A development Portico's set-up before it starts: its sandbox and its environment. */
export interface DevelopmentSetup {
  sandbox: SandboxProvider;
  /** The sandbox app's id (what the provider's callbacks name). */
  appId: string;
  /** `http://localhost:<port>`: the APP_BASE_URL a person opens. */
  appUrl: string;
  port: number;
  /** The server's (and the CLI's) whole environment, as `npm start` runs it in development. */
  env: NodeJS.ProcessEnv;
}

/**
 * A sandbox provider with one app (`name`, the callbacks when asked) for a Portico at a free
 * port, and that Portico's environment over a data directory of its own. The sandbox and the
 * directory go with `suite`'s clean-up, after the processes it stops.
 */
export async function developmentSetup(
  suite: Hookable,
  app: { name: string; callbacks?: boolean },
): Promise<DevelopmentSetup> {
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-browser-'));
  suite.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const appUrl = `http://localhost:${port}`;
  const appId = `1${randomBytes(5).readUIntBE(0, 5)}`;
  const appSecret = randomBytes(24).toString('hex');
  const redirectUri = `${appUrl}/api/auth/partner/callback`;
  const sandbox = await startSandboxProvider({
    host: '127.0.0.1',
    port: 0,
    apps: [
      {
        appId,
        appSecret,
        redirectUris: [redirectUri],
        name: app.name,
        ...(app.callbacks && {
          deauthorizeCallbackUrl: `${appUrl}/api/auth/partner/deauthorize`,
          dataDeletionCallbackUrl: `${appUrl}/api/auth/partner/data-deletion`,
        }),
      },
    ],
  });
  suite.after(() => sandbox.close());
  const env = spawnedServerEnv(
    { NODE_ENV: 'development', PORT: String(port), DATA_DIR: dataDir, APP_BASE_URL: appUrl },
    { url: sandbox.url, appId, appSecret, redirectUri },
  );
  return { sandbox, appId, appUrl, port, env };
}

/**
 * A portal with its main administrator, who can sign in with `password`, made with the CLI as
 * the README does (before the server starts: the CLI opens the data directory itself).
 *
 * @returns what `portal create --json` printed (its `token` among it).
 */
export async function portalWithAdmin(
  suite: Hookable,
  env: NodeJS.ProcessEnv,
  admin: { email: string; code: string; password: string },
): Promise<string> {
  const created = await cli(suite, env, [
    'portal',
    'create',
    '--name',
    'Acme',
    '--admin-email',
    admin.email,
    '--code',
    admin.code,
    '--json',
  ]);
  await cli(
    suite,
    env,
    ['user', 'set-password', '--portal', admin.code, '--email', admin.email],
    `${admin.password}\n`,
  );
  return created;
}
