/**
 * The admin CLI: `npm run cli -- <command>` (built to dist/cli.js). Every command has `--help`
 * and `--json`; the commands are listed in docs/reference/cli.md (made from `commands.ts`).
 *
 * Storage: with DATABASE_URL the CLI talks to PostgreSQL itself. With the embedded database it
 * opens the data directory when no server holds it, and otherwise hands the command to the
 * running server over its admin socket (PGlite allows one process per directory).
 *
 * Errors go to standard error: `error: <message>`, or with `--json` `{"error":{"code",
 * "message"}}`; the exit status says which kind (failure.ts): 0 done; 1 refused; 2 usage or
 * configuration; 3 the command could not run.
 *
 * @see docs/reference/cli.md
 */
import { CommanderError } from 'commander';
import { loadDotEnv } from '../config.ts';
import { failureOf } from './failure.ts';
import { buildProgram } from './program.ts';

async function cli(argv: string[]): Promise<number> {
  loadDotEnv();
  const end = argv.indexOf('--');
  const jsonErrors = (end === -1 ? argv : argv.slice(0, end)).includes('--json');
  try {
    await buildProgram(jsonErrors).parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError && err.exitCode === 0) return 0; // --help, --version
    const { code, exit, message } = failureOf(err);
    // Without --json commander has printed its usage errors itself, with a hint.
    if (!jsonErrors && err instanceof CommanderError) return exit;
    process.stderr.write(
      jsonErrors ? `${JSON.stringify({ error: { code, message } })}\n` : `error: ${message}\n`,
    );
    return exit;
  }
}

process.exitCode = await cli(process.argv);
