/**
 * The CLI reference in Markdown (docs/cli.md), made from the command table: every command with
 * its description and options. `scripts/cli-reference.ts` prints it; a test fails when
 * docs/cli.md differs.
 *
 * @see docs/cli.md
 */
import { flagOf, isRequired, type AdminCommand } from './command.ts';
import { COMMANDS, GROUPS } from './commands.ts';
import { JSON_OPTION, PROGRAM_DESCRIPTION } from './program.ts';

/** One command's section. */
function section(command: AdminCommand, level: string): string[] {
  const options = Object.entries(command.options).map(([key, spec]) => {
    const flag = spec.value ? `${flagOf(key)} ${spec.value}` : flagOf(key);
    const required = isRequired(command, key) ? ' (required)' : '';
    return `- \`${flag}\`${required}: ${spec.description}`;
  });
  options.push(`- \`${JSON_OPTION.flags}\`: ${JSON_OPTION.description}`);
  return [
    `${level} \`${command.name}\``,
    '',
    `${command.description[0]!.toUpperCase()}${command.description.slice(1)}.`,
    '',
    ...options,
    '',
  ];
}

/** docs/cli.md, ending in one newline. */
export function cliReference(): string {
  const lines = [
    '# Admin CLI reference',
    '',
    '<!-- Made by `npm run docs:cli` (scripts/cli-reference.ts) from src/cli/commands.ts. -->',
    '',
    `${PROGRAM_DESCRIPTION}.`,
    '',
    'Run a command as `npm run cli -- <command> [options]`; every command has `--help`. Where the',
    'storage is, how a running server takes the command, the exit statuses and the error output:',
    'README.md "Admin CLI".',
    '',
  ];
  const groupsDone = new Set<string>();
  for (const command of COMMANDS) {
    const [group, sub] = command.name.split(' ');
    if (sub === undefined) {
      lines.push(...section(command, '##'));
      continue;
    }
    if (!groupsDone.has(group!)) {
      groupsDone.add(group!);
      lines.push(
        `## \`${group}\``,
        '',
        `${GROUPS[group!] ?? ''}`.replace(/^./, (c) => c.toUpperCase()) + '.',
        '',
      );
    }
    lines.push(...section(command, '###'));
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
