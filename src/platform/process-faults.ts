/**
 * The server process's fault policy: which errors that reach the process (an unhandled
 * rejection, an uncaught exception) keep it serving and which end it.
 *
 * - A **dependency fault** — the database unreachable or restarting, a connection ended under a
 *   transaction, a pool timeout, a full disk under the embedded database, Redis or a network
 *   peer gone — keeps the process up: the requests it touches answer 503 `unavailable`, the
 *   fault is said in one summary line per interval (`fault-summary.ts`), and the service
 *   recovers when the dependency does. Ending the process would turn one dependency's outage
 *   into a crash loop of every instance, and abandon the work in hand.
 * - A **programming error** (`TypeError`, `ReferenceError`, `SyntaxError`, `RangeError`,
 *   `EvalError`, `URIError`, a failed assertion) ends it with exit code 1 after logging it with
 *   its stack: the process's state can no longer be trusted; the orchestrator starts a new one.
 * - Any other **rejection** is logged with its stack and the process keeps serving (a rejection
 *   leaves no half-run synchronous code behind).
 * - Any other **uncaught exception** ends the process (code 1), as Node's default does:
 *   synchronous code stopped halfway.
 *
 * @see https://nodejs.org/api/process.html#event-unhandledrejection
 * @see https://nodejs.org/api/process.html#warning-using-uncaughtexception-correctly
 * @see docs/decisions/0035-process-fault-policy.md
 */
import { CONNECTION_ERRNOS, databaseErrorCode, databaseFailureKind } from './database-errors.ts';
import { dependencyFaults, type FaultKind, type FaultLog } from './fault-summary.ts';

/** Errno codes of a network peer or a disk that failed (not a bug of ours). */
const DEPENDENCY_ERRNOS = new Set([...CONNECTION_ERRNOS, 'ECONNABORTED']);

/** ioredis's errors of a connection that is down (`enableOfflineQueue: false`, closed, retried). */
const REDIS_DOWN =
  /Stream isn't writeable|Connection is closed|Reached the max retries per request|MaxRetriesPerRequestError/;

/** Error classes that name a bug in the code, never a dependency's state. */
const PROGRAMMING_ERRORS = [
  TypeError,
  ReferenceError,
  SyntaxError,
  RangeError,
  EvalError,
  URIError,
];

/**
 * What a fault that reached the process is:
 * - `dependency`: a dependency failed (the database, the disk, Redis, a network peer), with the
 *   `kind` it is counted under;
 * - `programming`: a bug (see the module's comment);
 * - `other`: anything else.
 */
export function classifyFault(
  err: unknown,
):
  | { class: 'dependency'; kind: FaultKind; code: string | undefined }
  | { class: 'programming' | 'other' } {
  if (databaseFailureKind(err) === 'unavailable')
    return { class: 'dependency', kind: 'storage', code: databaseErrorCode(err) };
  for (let e: unknown = err; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const { code, name, message } = e as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof code === 'string' && DEPENDENCY_ERRNOS.has(code))
      return { class: 'dependency', kind: 'storage', code };
    if (
      (typeof name === 'string' && name === 'MaxRetriesPerRequestError') ||
      (typeof message === 'string' && REDIS_DOWN.test(message))
    )
      return {
        class: 'dependency',
        kind: 'redis',
        code: typeof code === 'string' ? code : undefined,
      };
  }
  if (err instanceof Error) {
    if ((err as { code?: unknown }).code === 'ERR_ASSERTION') return { class: 'programming' };
    if (PROGRAMMING_ERRORS.some((type) => err.constructor === type))
      return { class: 'programming' };
  }
  return { class: 'other' };
}

/**
 * Log a failure that background work caught and handles itself (a retry follows): a
 * dependency's fault is counted in the process's one summary line per interval, without a stack
 * (an outage would otherwise write one per attempt); anything else is warned with its stack.
 */
export function warnCaught(log: FaultLog, fields: object, err: unknown, message: string): void {
  const fault = classifyFault(err);
  if (fault.class === 'dependency') dependencyFaults.note(fault.kind, fault.code, log);
  else log.warn({ ...fields, err }, message);
}

/** What the policy logs through and how it ends the process. */
export interface ProcessFaultDeps {
  log: FaultLog & {
    error(fields: object, message: string): void;
    fatal(fields: object, message: string): void;
  };
  /** End the process with `code` once the log is written (main.ts flushes, then exits). */
  exit(code: number): void;
}

/**
 * What to do with one fault: `keep` serving or `exit`. Logs it as the module's comment says.
 */
export function handleProcessFault(
  err: unknown,
  origin: 'unhandledRejection' | 'uncaughtException',
  deps: ProcessFaultDeps,
): 'keep' | 'exit' {
  const fault = classifyFault(err);
  if (fault.class === 'dependency') {
    dependencyFaults.note(fault.kind, fault.code, deps.log);
    return 'keep';
  }
  if (fault.class === 'other' && origin === 'unhandledRejection') {
    deps.log.error({ err, origin }, 'an unhandled rejection; still serving');
    return 'keep';
  }
  deps.log.fatal({ err, origin }, 'a programming error reached the process; exiting');
  deps.exit(1);
  return 'exit';
}

/**
 * Install the policy on this process (the server's `main.ts` only: a test or a library leaves
 * the process's handlers alone). Returns a function that removes it.
 */
export function installProcessFaultPolicy(deps: ProcessFaultDeps): () => void {
  const onRejection = (reason: unknown) =>
    void handleProcessFault(reason, 'unhandledRejection', deps);
  const onException = (err: unknown) => void handleProcessFault(err, 'uncaughtException', deps);
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  };
}
