/**
 * The commander program, made from the command table (`commands.ts`): one subcommand per
 * command, one option per entry of its `options` (required when its schema requires it, marked
 * `(required)` in `--help`, which commander does not do), and `--json` on every command.
 *
 * @see docs/reference/cli.md
 */
import { Argument, Command, Option } from 'commander';
import { flagOf, isRequired, type AdminCommand } from './command.ts';
import { COMMANDS, GROUPS } from './commands.ts';
import { runFromCommandLine } from './execute.ts';

export const PROGRAM_NAME = 'npm run cli --';
export const PROGRAM_DESCRIPTION =
  'Portico admin: portals, users, API tokens, contacts and messaging credit';
export const JSON_OPTION = {
  flags: '--json',
  description: 'print the result (and any error) as JSON',
};

/** The commander options of `command`, `--json` last. */
export function optionsOf(command: AdminCommand): Option[] {
  const options = Object.entries(command.options).map(([key, spec]) => {
    const required = isRequired(command, key);
    const option = new Option(
      spec.value ? `${flagOf(key)} ${spec.value}` : flagOf(key),
      required ? `${spec.description} (required)` : spec.description,
    );
    if (required) option.makeOptionMandatory();
    if (spec.parse) option.argParser(spec.parse);
    if (!spec.value) option.default(false);
    return option;
  });
  return [...options, new Option(JSON_OPTION.flags, JSON_OPTION.description)];
}

/**
 * The program. Errors surface as exceptions (`exitOverride`) so the entry alone maps them to
 * exit codes; with `--json` commander prints none of its own (the entry prints them as JSON).
 */
export function buildProgram(jsonErrors: boolean): Command {
  // Settings first: subcommands copy them when they are created.
  const program = new Command(PROGRAM_NAME).description(PROGRAM_DESCRIPTION).exitOverride();
  if (jsonErrors) program.configureOutput({ outputError: () => undefined });
  else program.showHelpAfterError('(add --help for usage)');
  const groups = new Map<string, Command>();
  for (const command of COMMANDS) {
    const [group, sub] = command.name.split(' ') as [string, string | undefined];
    let parent = program;
    if (sub !== undefined) {
      parent = groups.get(group) ?? program.command(group).description(GROUPS[group] ?? '');
      groups.set(group, parent);
    }
    const cmd = parent.command(sub ?? group).description(command.description);
    const positionals = Object.entries(command.positionals ?? {});
    for (const [, spec] of positionals) {
      const argument = new Argument(spec.value, spec.description);
      if (spec.parse) argument.argParser(spec.parse);
      cmd.addArgument(argument);
    }
    for (const option of optionsOf(command)) cmd.addOption(option);
    // commander passes the positional values first, then the options.
    cmd.action((...values: unknown[]) => {
      const options = { ...(values[positionals.length] as Record<string, unknown>) };
      positionals.forEach(([key], i) => (options[key] = values[i]));
      return runFromCommandLine(command, options);
    });
  }
  return program;
}
