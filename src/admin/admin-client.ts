/**
 * The CLI's side of the admin socket (`admin-socket.ts` is the server's): where the socket is
 * and how to send it a command. Kept apart so the CLI loads no HTTP framework to talk to it.
 *
 * Invariant: only the OS user that owns the data directory can connect (directory 0700,
 * socket 0600).
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { UsageError } from '../platform/errors.ts';

/** The socket's file name inside the data directory. */
export const ADMIN_SOCKET = 'portico.sock';

export function adminSocketPath(dataDir: string): string {
  return join(dataDir, ADMIN_SOCKET);
}

/**
 * Send a command to the server listening on `socketPath`.
 *
 * @returns the command's result.
 * @throws UsageError with the server's message when it refused the command; Error when the
 *   socket cannot be reached or answers something else.
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
              error?: string;
              message?: string;
            };
            if (reply.ok) resolve(reply.result);
            else if (res.statusCode === 400 && reply.error) reject(new UsageError(reply.error));
            else
              reject(
                new Error(
                  `The server could not run the command: ${reply.message ?? res.statusCode}`,
                ),
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
