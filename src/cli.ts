/**
 * The admin CLI: `npm run cli -- <command>`. Every command has `--help` and `--json`.
 *
 * Storage: with DATABASE_URL the CLI talks to PostgreSQL itself. With the embedded database it
 * opens the data directory when no server holds it, and otherwise hands the command to the
 * running server over its admin socket (PGlite allows one process per directory).
 *
 * Exit codes: 0 done; 1 refused (bad input, unknown portal, ...); 2 usage; 3 storage failure.
 */
import { Command, CommanderError } from 'commander';
import {
  addAuditCommands,
  addKeysCommands,
  addMigrateCommand,
  addPortalCommands,
  addTokenCommands,
  addUserCommands,
} from './cli-commands.ts';
import { addContactsCommands } from './cli-contacts.ts';
import { addCreditCommands } from './cli-messaging.ts';
import { addWebhookCommands } from './cli-webhooks.ts';
import { ConfigError, loadDotEnv } from './config.ts';
import { UsageError } from './platform/errors.ts';

/**
 * The commander program. Errors surface as exceptions (`exitOverride`) so `cli` alone maps them
 * to exit codes.
 */
function buildProgram(): Command {
  // Settings first: subcommands copy them when they are created.
  const program = new Command('npm run cli --')
    .description('Portico admin: portals, users, API tokens, contacts and messaging credit')
    .exitOverride()
    .showHelpAfterError('(add --help for usage)');
  // In the order `--help` lists them.
  addMigrateCommand(program);
  addPortalCommands(program);
  addTokenCommands(program);
  addUserCommands(program);
  addKeysCommands(program);
  addAuditCommands(program);
  addContactsCommands(program);
  addCreditCommands(program);
  addWebhookCommands(program);
  return program;
}

async function cli(argv: string[]): Promise<number> {
  loadDotEnv();
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`error: ${err.message}\n`);
      return err instanceof ConfigError ? 2 : 1;
    }
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 3;
  }
}

process.exitCode = await cli(process.argv);
