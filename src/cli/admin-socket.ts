/**
 * The admin socket: a Unix domain socket in the data directory through which the CLI hands
 * commands to the running server while the server owns the embedded database.
 *
 * Replies: `{"ok": true, "result"}`, or `{"ok": false, "error": {"code", "message"}}` with the
 * code and message the CLI would have printed had it run the command itself (`failure.ts`); a
 * failure that is not a refusal (exit 3) is also logged with its stack.
 *
 * Invariant: only the OS user that owns the data directory can connect. The directory is 0700
 * and the socket 0600, so the socket needs no credential of its own.
 */
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';
import { adminSocketPath } from './admin-client.ts';
import { runCommand } from './commands.ts';
import { failureOf } from './failure.ts';

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
  admin.setErrorHandler((err, req, reply) => {
    const { code, exit, message } = failureOf(err);
    if (exit === 3) req.log.error({ err }, 'an admin command failed');
    return reply.code(exit === 3 ? 500 : 400).send({ ok: false, error: { code, message } });
  });
  admin.post<{ Params: { name: string }; Body: unknown }>('/commands/:name', async (req) => ({
    ok: true,
    result: await runCommand(services, req.params.name, req.body ?? {}),
  }));
  await admin.listen({ path });
  chmodSync(path, 0o600);
  return admin;
}
