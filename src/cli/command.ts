/**
 * What an operator command is: one object holding its name, its description, its options (the
 * TypeBox schema of its arguments plus the words and parsing of each command-line option), how
 * it runs against the services, and how its result is printed. The CLI's program
 * (`program.ts`), the admin socket (`admin-socket.ts`) and the reference in docs/reference/cli.md
 * (`reference.ts`) are all made from the table of these objects (`commands.ts`).
 *
 * @see docs/reference/cli.md
 */
import { InvalidArgumentError } from 'commander';
import { Type, type Static, type TObject } from 'typebox';
import type { Services } from '../services.ts';

/** One command-line option: `--<kebab-case of its key>` followed by `value` when it takes one. */
export interface OptionSpec {
  /** The placeholder of its value, e.g. `<email>`; absent for a flag (a boolean option). */
  value?: string;
  description: string;
  /** Turns the typed text into the argument; a usage error (exit 2) is thrown as
   * commander's InvalidArgumentError. Default: the text itself. */
  parse?: (value: string) => unknown;
  /** Required even though `args` does not have it (an option the CLI turns into arguments). */
  required?: boolean;
}

/** What a printer gets besides the result. */
export interface PrintContext {
  /** The command-line options as commander parsed them. */
  options: Record<string, unknown>;
  /** Where the storage is, in words (`the data directory /srv/portico/data`). */
  storage: () => string;
}

/**
 * An operator command. `args` is checked on both paths (the CLI's own storage and the admin
 * socket), so a command cannot be run with arguments the CLI would not have produced.
 *
 * @typeParam A the arguments' schema; R what `run` returns; P what is printed (R unless `send`
 *   turns the CLI's options into several runs).
 */
export interface AdminCommand<A extends TObject = TObject, R = unknown, P = R> {
  /** The words typed after `npm run cli --`, e.g. `portal create`. */
  name: string;
  description: string;
  args: A;
  /** The command-line options by argument name; `--json` is added to every command. */
  options: Record<string, OptionSpec>;
  /**
   * Positional arguments by argument name, in the order they are typed (`key revoke <id>`);
   * each is required, `value` is its placeholder (`<id>`).
   */
  positionals?: Record<string, OptionSpec & { value: string }>;
  /** Whether it may create the embedded database's directory (every other command needs it). */
  createsStorage?: boolean;
  /**
   * The CLI's side when its options are not simply the arguments (a password read from the
   * terminal, a file sent in batches): `exec` runs the command (here or on the server).
   */
  send?(options: Record<string, unknown>, exec: (args: Static<A>) => Promise<R>): Promise<P>;
  run(services: Services, args: Static<A>): Promise<R>;
  /** The result in words, without the final newline (`--json` prints it as JSON instead). */
  print(result: P, context: PrintContext): string;
  /** What `--json` prints, when not the result itself. */
  json?(result: P): unknown;
}

/** Typed once here, so each command's `run` and `print` see their own argument and result types. */
export function defineCommand<A extends TObject, R, P = R>(
  command: AdminCommand<A, R, P>,
): AdminCommand<A, R, P> {
  return command;
}

/**
 * The audit log's module, loaded when a command runs: the CLI that only hands a command to a
 * running server loads no database code.
 */
export const auditLog = () => import('../audit/audit-log.ts');

/** The actor of every CLI command in the audit log (audit-log.ts `CLI_ACTOR`). */
export const cliActor = async () => (await auditLog()).CLI_ACTOR;

/** `--portal <code>`. */
export const Portal = Type.String({ minLength: 1, maxLength: 32 });
export const portalOption: OptionSpec = { value: '<code>', description: 'portal code (digits)' };

/** `a, b,c` → `['a', 'b', 'c']`. */
export const list = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * A parser for a whole number from `min` to `max`: anything else is a usage error (exit 2) in
 * words, before any storage is opened.
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

/**
 * A parser for an integer checked by the command's schema (a refusal, exit 1, in the schema's
 * words): `-5` stays -5, anything that is not an integer becomes NaN ("must be a whole number").
 */
export const integer = (value: string): number =>
  /^\s*[-+]?\d{1,16}\s*$/.test(value) ? Number(value) : Number.NaN;

/** `adminEmail` → `--admin-email`. */
export const flagOf = (key: string): string =>
  `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** The usage line's positional placeholders of `command`, e.g. ` <id>` (empty when none). */
export const positionalWords = (command: AdminCommand): string =>
  Object.values(command.positionals ?? {})
    .map((p) => ` ${p.value}`)
    .join('');

/** Whether option `key` of `command` must be given. */
export function isRequired(command: AdminCommand, key: string): boolean {
  return command.options[key]?.required === true || (command.args.required ?? []).includes(key);
}
