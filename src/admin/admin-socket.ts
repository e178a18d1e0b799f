/**
 * The admin socket: a Unix domain socket in the data directory through which the CLI hands
 * commands to the running server while the server owns the embedded database.
 *
 * Invariant: only the OS user that owns the data directory can connect. The directory is 0700
 * and the socket 0600, so the socket needs no credential of its own.
 */
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { UsageError } from '../platform/errors.ts';
import type { Services } from '../services.ts';
import { runCommand } from './commands.ts';

import { adminSocketPath } from './admin-client.ts';

/**
 * Start listening on `{dataDir}/portico.sock`. The caller owns the data directory lock, so a
 * socket file left there by a crashed process is stale and is replaced.
 */
export async function startAdminSocket(
  services: Services,
  logger: FastifyBaseLogger,
): Promise<FastifyInstance> {
  const path = adminSocketPath(services.config.dataDir);
  if (existsSync(path)) unlinkSync(path);
  const admin = Fastify({ loggerInstance: logger.child({ component: 'admin-socket' }) });
  admin.post<{ Params: { name: string }; Body: unknown }>('/commands/:name', async (req, reply) => {
    try {
      return { ok: true, result: await runCommand(services, req.params.name, req.body ?? {}) };
    } catch (err) {
      if (err instanceof UsageError) {
        return reply.code(400).send({ ok: false, error: err.message, code: err.code });
      }
      throw err;
    }
  });
  await admin.listen({ path });
  chmodSync(path, 0o600);
  return admin;
}
