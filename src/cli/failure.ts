/**
 * What went wrong with a command, for the CLI's exit status and error line and for the admin
 * socket's reply: one classification, so an error says the same through the socket as when the
 * CLI runs the command itself.
 *
 * Exit statuses: 1 the command was refused (bad input, nothing found, a conflict: codes
 * `refused`, `not_found` and the service's own 4xx codes such as `invalid_request` or
 * `conflict`); 2 usage or configuration (`usage`, `config`); 3 the command could not run
 * (`storage`, or a service's 5xx code such as `unavailable`).
 *
 * @see docs/reference/cli.md
 */
import { CommanderError } from 'commander';
import { AppError, ConfigError, ERROR_STATUS, UsageError } from '../platform/errors.ts';

export interface Failure {
  /** A stable code for scripts. */
  code: string;
  exit: 1 | 2 | 3;
  /** For people: never a stack trace. */
  message: string;
}

/** An error a server reported over the admin socket, with its code. */
export class RemoteFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RemoteFailure';
  }
}

/** The exit status of a failure code. */
export function exitFor(code: string): 1 | 2 | 3 {
  if (code === 'usage' || code === 'config') return 2;
  if (code === 'refused' || code === 'not_found') return 1;
  const status = (ERROR_STATUS as Record<string, number | undefined>)[code];
  return status !== undefined && status < 500 ? 1 : 3;
}

/**
 * `message` with its `details`: the field it names (`url: must use https:`), and every detail it
 * does not already say.
 */
function withDetails(err: AppError): string {
  const details = err.details ?? [];
  const same = details.find((d) => d.message === err.message);
  if (same) return `${same.field}: ${err.message}`;
  const extra = details
    .filter((d) => !err.message.includes(d.message))
    .map((d) => `${d.field}: ${d.message}`);
  return extra.length === 0
    ? err.message
    : `${err.message.replace(/\.$/, '')} (${extra.join('; ')}).`;
}

/** The code, exit status and message of any error a command can end with. */
export function failureOf(err: unknown): Failure {
  if (err instanceof CommanderError) {
    return { code: 'usage', exit: 2, message: err.message.replace(/^error: /, '') };
  }
  if (err instanceof ConfigError) return { code: 'config', exit: 2, message: err.message };
  if (err instanceof UsageError) return { code: err.code, exit: 1, message: err.message };
  if (err instanceof AppError)
    return { code: err.code, exit: exitFor(err.code), message: withDetails(err) };
  if (err instanceof RemoteFailure)
    return { code: err.code, exit: exitFor(err.code), message: err.message };
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'storage', exit: 3, message };
}
