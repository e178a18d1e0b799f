/**
 * The CLI's side of the admin socket (`admin-socket.ts` is the server's): where the socket is
 * and how to send it a command. Kept apart so the CLI loads no HTTP framework to talk to it.
 *
 * Invariant: only the OS user that owns the data directory can connect (directory 0700,
 * socket 0600).
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { liveLockOwner } from '../platform/data-dir-lock.ts';
import { UsageError } from '../platform/errors.ts';
import { RemoteFailure } from './failure.ts';

/** The socket's file name inside the data directory. */
export const ADMIN_SOCKET = 'portico.sock';

export function adminSocketPath(dataDir: string): string {
  return join(dataDir, ADMIN_SOCKET);
}

/**
 * Send a command to the server listening on `socketPath`.
 *
 * @returns the command's result.
 * @throws UsageError (`refused`, `not_found`) or RemoteFailure (any other code) with the
 *   server's code and message when the command failed there; Error when the socket cannot be
 *   reached or answers something else.
 */
export function sendAdminCommand(
  socketPath: string,
  name: string,
  args: unknown,
): Promise<unknown> {
  const body = JSON.stringify(args);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        method: 'POST',
        path: `/commands/${encodeURIComponent(name)}`,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            const reply = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
              ok?: boolean;
              result?: unknown;
              error?: { code?: unknown; message?: unknown };
            };
            if (reply.ok) return resolve(reply.result);
            const code = typeof reply.error?.code === 'string' ? reply.error.code : 'storage';
            const message =
              typeof reply.error?.message === 'string'
                ? reply.error.message
                : `The server could not run the command (HTTP ${res.statusCode}).`;
            reject(
              code === 'refused' || code === 'not_found'
                ? new UsageError(message, code)
                : new RemoteFailure(code, message),
            );
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Connection errors that mean nobody listens on the socket yet: the command was not sent. */
function isNotListening(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ECONNREFUSED';
}

/** The server that held the data directory stopped before it opened its admin socket. */
export class ServerGoneError extends Error {
  constructor(options?: ErrorOptions) {
    super('The server holding the data directory stopped before its admin socket opened.', options);
    this.name = 'ServerGoneError';
  }
}

/**
 * Send a command to the server that holds `dataDir`, waiting for its admin socket while it
 * starts: between taking the data-directory lock and listening (migrations, the app's start)
 * the socket is not there yet. Retries only while the connection is refused, so a command is
 * never sent twice; says once on `notice` that it waits.
 *
 * @param options.timeoutMs how long to wait for the socket, in milliseconds.
 * @returns the command's result.
 * @throws ServerGoneError when the lock's owner died meanwhile (the caller may open the
 *   directory itself); Error when the socket did not open within `timeoutMs`; whatever
 *   `sendAdminCommand` throws otherwise.
 */
export async function sendAdminCommandWhenReady(
  dataDir: string,
  name: string,
  args: unknown,
  options: { timeoutMs: number; notice: (line: string) => void; pollMs?: number },
): Promise<unknown> {
  const deadline = Date.now() + options.timeoutMs;
  let told = false;
  for (;;) {
    try {
      return await sendAdminCommand(adminSocketPath(dataDir), name, args);
    } catch (err) {
      if (!isNotListening(err)) throw err;
      const owner = liveLockOwner(dataDir);
      if (owner === null) throw new ServerGoneError({ cause: err });
      if (Date.now() >= deadline)
        throw new Error(
          `The server (pid ${owner}) holds ${dataDir} but did not open its admin socket within ` +
            `${Math.round(options.timeoutMs / 1000)} s; is it stuck starting?`,
          { cause: err },
        );
      if (!told) {
        told = true;
        options.notice(
          `The server (pid ${owner}) is starting; waiting up to ${Math.round(options.timeoutMs / 1000)} s for it to accept commands…`,
        );
      }
      await sleep(options.pollMs ?? 200);
    }
  }
}
