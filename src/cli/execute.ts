/**
 * Running one admin command for the CLI: where the storage is (and saying so), handing the
 * command to a running server or opening the storage here, and printing the result.
 *
 * @see docs/reference/cli.md
 */
import { existsSync } from 'node:fs';
import type { Static, TObject } from 'typebox';
import { parseConfig, type Config } from '../config.ts';
import { DataDirLockedError, liveLockOwner } from '../platform/data-dir-lock.ts';
import { UsageError } from '../platform/errors.ts';
import { sendAdminCommandWhenReady, ServerGoneError } from './admin-client.ts';
import type { AdminCommand } from './command.ts';
import { failureOf } from './failure.ts';

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
function checkDataDir(config: Config, command: AdminCommand): void {
  if (config.DATABASE_URL || existsSync(config.dataDir)) return;
  const unset = process.env.DATA_DIR === undefined || process.env.DATA_DIR === '';
  const why = unset ? ' (DATA_DIR is not set, so ./data of the current directory)' : '';
  if (command.createsStorage) {
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
 * Run `command`: through the running server's admin socket when it holds the embedded
 * database, else against storage opened (and migrated) here.
 *
 * @returns the result as JSON would carry it (the same whichever process ran the command).
 * @throws UsageError when refused, a `not_found` one saying which storage it looked in;
 *   whatever else the command ends with (failure.ts classifies it).
 */
export async function execute(
  config: Config,
  command: AdminCommand,
  args: unknown,
): Promise<unknown> {
  checkDataDir(config, command);
  try {
    return await executeHere(config, command.name, args);
  } catch (err) {
    const { code, message } = failureOf(err);
    if (code === 'not_found' && !/^No data directory/.test(message)) {
      throw new UsageError(
        `${message.replace(/\.$/, '')} (looked in ${storageDescription(config)}).`,
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
  const { runLocally } = await import('./local.ts');
  try {
    // As the socket would carry it: dates as ISO strings, whichever process ran it.
    return JSON.parse(JSON.stringify(await runLocally(config, name, args)) ?? 'null') as unknown;
  } catch (err) {
    // A server started between our check and our open: hand the command over instead.
    if (err instanceof DataDirLockedError) return viaServer();
    throw err;
  }
}

/**
 * Run `command` from the command line: its options turned into arguments (or `send` does it),
 * run here or on the server, the result printed in words or, with `--json`, as JSON. The
 * configuration is parsed only when the command needs storage.
 */
export async function runFromCommandLine<A extends TObject>(
  command: AdminCommand<A, unknown, unknown>,
  options: Record<string, unknown>,
): Promise<void> {
  let config: Config | undefined;
  const configOnce = () => (config ??= parseConfig());
  const exec = (args: Static<A>) => execute(configOnce(), command, args);
  const result = command.send
    ? await command.send(options, exec)
    : await exec(argsOf(command, options) as Static<A>);
  const printed = options.json
    ? JSON.stringify(command.json ? command.json(result) : result, null, 2)
    : command.print(result, { options, storage: () => storageDescription(configOnce()) });
  process.stdout.write(`${printed}\n`);
}

/** The options that are arguments of `command`, as commander parsed them. */
function argsOf(command: AdminCommand, options: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(command.args.properties)
      .filter((key) => options[key] !== undefined)
      .map((key) => [key, options[key]]),
  );
}
