/**
 * The CLI running a command itself, against storage it opens (and migrates) here: with
 * DATABASE_URL, or with the embedded database when no server holds the data directory.
 * `execute.ts` imports this module only when it needs it.
 */
import type { Config } from '../config.ts';
import { openStorage, storageTargetFor } from '../db/client.ts';
import { createLogger } from '../platform/logger.ts';
import { createServices } from '../services.ts';
import { runCommand } from './commands.ts';

/**
 * Open storage, migrate, run admin command `name`, close.
 *
 * @throws DataDirLockedError when a server took the data directory meanwhile; UsageError for a
 *   refused command.
 */
export async function runLocally(config: Config, name: string, args: unknown): Promise<unknown> {
  const target = storageTargetFor(config);
  // Marked as the CLI's: a server starting meanwhile waits for this command to finish.
  const storage = await openStorage(
    target.kind === 'pglite' ? { ...target, holder: 'cli' } : target,
  );
  try {
    await storage.migrate();
    const services = createServices({ config, storage, logger: createLogger('silent') });
    try {
      // A change may cause webhook events (a ticket reply, a status): they are queued here and
      // delivered by a server.
      await services.webhooks.startIfEndpoints();
      return await runCommand(services, name, args);
    } finally {
      // Only the job queue may have been started; it stops before storage closes.
      await services.stop();
    }
  } finally {
    await storage.close();
  }
}
