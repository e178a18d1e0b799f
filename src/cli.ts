/**
 * The admin CLI: `npm run cli -- <command>`. Every command has `--help` and `--json`.
 *
 * Storage: with DATABASE_URL the CLI talks to PostgreSQL itself. With the embedded database it
 * opens the data directory when no server holds it, and otherwise hands the command to the
 * running server over its admin socket (PGlite allows one process per directory).
 *
 * Exit codes: 0 done; 1 refused (bad input, unknown portal, ...); 2 usage or configuration;
 * 3 storage failure. Errors go to standard error: `error: <message>`, or with `--json`
 * `{"error":{"code","message"}}` (code `usage`, `config`, `refused`, `not_found`, `storage`).
 *
 * @see README.md "Admin CLI"
 */
import { Command, CommanderError } from 'commander';
import {
  addAuditCommands,
  addKeysCommands,
  addMigrateCommand,
  addPortalCommands,
  addScopesCommand,
  addTokenCommands,
  addUserCommands,
} from './cli-commands.ts';
import { addContactsCommands } from './cli-contacts.ts';
import { addCreditCommands } from './cli-messaging.ts';
import { addWebhookCommands } from './cli-webhooks.ts';
// Support (agents and tickets): registration in cli-support.ts, logic in admin/support-commands.ts.
import { addAgentCommands, addTicketCommands } from './cli-support.ts';
import { ConfigError, loadDotEnv } from './config.ts';
import { UsageError } from './platform/errors.ts';

/** Marks every required option `(required)` in `--help`, which commander does not. */
function markRequired(command: Command): void {
  for (const option of command.options) {
    if (option.mandatory) option.description = `${option.description} (required)`;
  }
  command.commands.forEach(markRequired);
}

/**
 * The commander program. Errors surface as exceptions (`exitOverride`) so `cli` alone maps them
 * to exit codes; with `--json` commander prints none of its own (`cli` prints them as JSON).
 */
function buildProgram(jsonErrors: boolean): Command {
  // Settings first: subcommands copy them when they are created.
  const program = new Command('npm run cli --')
    .description('Portico admin: portals, users, API tokens, contacts and messaging credit')
    .exitOverride();
  if (jsonErrors) program.configureOutput({ outputError: () => undefined });
  else program.showHelpAfterError('(add --help for usage)');
  // In the order `--help` lists them.
  addMigrateCommand(program);
  addPortalCommands(program);
  addTokenCommands(program);
  addScopesCommand(program);
  addUserCommands(program);
  addKeysCommands(program);
  addAuditCommands(program);
  addContactsCommands(program);
  addCreditCommands(program);
  addWebhookCommands(program);
  addAgentCommands(program);
  addTicketCommands(program);
  markRequired(program);
  return program;
}

/** What went wrong: a stable code for scripts, the exit status, and the message for people. */
function failure(err: unknown): { code: string; exit: number; message: string } {
  if (err instanceof CommanderError) {
    return { code: 'usage', exit: 2, message: err.message.replace(/^error: /, '') };
  }
  if (err instanceof ConfigError) return { code: 'config', exit: 2, message: err.message };
  if (err instanceof UsageError) return { code: err.code, exit: 1, message: err.message };
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'storage', exit: 3, message };
}

async function cli(argv: string[]): Promise<number> {
  loadDotEnv();
  const end = argv.indexOf('--');
  const jsonErrors = (end === -1 ? argv : argv.slice(0, end)).includes('--json');
  try {
    await buildProgram(jsonErrors).parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError && err.exitCode === 0) return 0; // --help, --version
    const { code, exit, message } = failure(err);
    // Without --json commander has printed its usage errors itself, with a hint.
    if (!jsonErrors && err instanceof CommanderError) return exit;
    process.stderr.write(
      jsonErrors ? `${JSON.stringify({ error: { code, message } })}\n` : `error: ${message}\n`,
    );
    return exit;
  }
}

process.exitCode = await cli(process.argv);
