/**
 * Running one admin command for the CLI: where the storage is (and saying so), handing the
 * command to a running server or opening the storage here, and printing the result.
 *
 * @see README.md "Admin CLI"
 */
import { existsSync } from 'node:fs';
import { InvalidArgumentError, Option } from 'commander';
import { sendAdminCommandWhenReady, ServerGoneError } from './admin/admin-client.ts';
import { parseConfig, type Config } from './config.ts';
import { DataDirLockedError, liveLockOwner } from './platform/data-dir-lock.ts';
import { UsageError } from './platform/errors.ts';

/**
 * Renders a command's result for a person: the text printed, without the final newline (the
 * config tells where the storage is, for a message such as "No portals in …").
 */
export type Printer = (result: unknown, config: Config) => string;

/** The commands that may create the storage; every other one needs a portal, so storage. */
const CREATING = new Set(['migrate', 'portal create']);

/**
 * Where this CLI's storage is, in words: `the data directory /srv/portico/data` or
 * `the PostgreSQL database portico on db.internal:5432`. Never a user name or password.
 */
export function storageDescription(config: Config): string {
  if (!config.DATABASE_URL) return `the data directory ${config.dataDir}`;
  try {
    const url = new URL(config.DATABASE_URL);
    const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || 'postgres';
    return `the PostgreSQL database ${database} on ${url.hostname}:${url.port || '5432'}`;
  } catch {
    return 'the PostgreSQL database of DATABASE_URL';
  }
}

/**
 * The embedded database's directory is created only by a command that creates something, and
 * then said on standard error; any other command refuses a directory that does not exist
 * instead of creating an empty one (a forgotten DATA_DIR would otherwise look like "no portal").
 *
 * @throws UsageError (`not_found`) naming the directory.
 */
function checkDataDir(config: Config, name: string): void {
  if (config.DATABASE_URL || existsSync(config.dataDir)) return;
  const unset = process.env.DATA_DIR === undefined || process.env.DATA_DIR === '';
  const why = unset ? ' (DATA_DIR is not set, so ./data of the current directory)' : '';
  if (CREATING.has(name)) {
    process.stderr.write(`Creating the data directory ${config.dataDir}${why}.\n`);
    return;
  }
  throw new UsageError(
    `No data directory at ${config.dataDir}${why}, so no portal. Set DATA_DIR to the ` +
      "server's data directory, or create a portal first (portal create).",
    'not_found',
  );
}

/**
 * Run the admin command `name`: through the running server's admin socket when it holds the
 * embedded database, else against storage opened (and migrated) here.
 *
 * @throws UsageError when refused, a `not_found` one saying which storage it looked in.
 */
export async function execute(config: Config, name: string, args: unknown): Promise<unknown> {
  checkDataDir(config, name);
  try {
    return await executeHere(config, name, args);
  } catch (err) {
    if (
      err instanceof UsageError &&
      err.code === 'not_found' &&
      !/^No data directory/.test(err.message)
    ) {
      throw new UsageError(
        `${err.message.replace(/\.$/, '')} (looked in ${storageDescription(config)}).`,
        'not_found',
      );
    }
    throw err;
  }
}

async function executeHere(config: Config, name: string, args: unknown): Promise<unknown> {
  const viaServer = () =>
    sendAdminCommandWhenReady(config.dataDir, name, args, {
      timeoutMs: config.CLI_SERVER_WAIT_MS,
      notice: (line) => process.stderr.write(`${line}\n`),
    });
  if (!config.DATABASE_URL && liveLockOwner(config.dataDir) !== null) {
    try {
      return await viaServer();
    } catch (err) {
      // The server stopped while starting: the directory is free (or stale), open it here.
      if (!(err instanceof ServerGoneError)) throw err;
    }
  }
  // Loaded only here: a command handed to the running server needs no storage, services or
  // migrations, and loading them is most of a CLI command's time.
  const { runLocally } = await import('./cli-local.ts');
  try {
    return await runLocally(config, name, args);
  } catch (err) {
    // A server started between our check and our open: hand the command over instead.
    if (err instanceof DataDirLockedError) return viaServer();
    throw err;
  }
}

/** The commander action of admin command `name`; the config is parsed when it runs. */
export function action(
  name: string,
  toArgs: (opts: Record<string, unknown>) => unknown,
  human: Printer,
) {
  return async (opts: Record<string, unknown>) => {
    const config = parseConfig();
    const result = await execute(config, name, toArgs(opts));
    process.stdout.write(
      opts.json ? `${JSON.stringify(result, null, 2)}\n` : `${human(result, config)}\n`,
    );
  };
}

export const json = new Option('--json', 'print the result (and any error) as JSON');
export const portal = ['--portal <code>', 'portal code (digits)'] as const;

/** `a, b,c` → `['a', 'b', 'c']`. */
export const list = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * A commander argument parser for a whole number from `min` to `max`: anything else is a usage
 * error (exit 2) in words, before any storage is opened.
 */
export function wholeNumber(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || n < min || n > max) {
      throw new InvalidArgumentError(`Give a whole number from ${min} to ${max}.`);
    }
    return n;
  };
}
