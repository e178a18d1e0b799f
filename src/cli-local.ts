/**
 * The CLI running a command itself, against storage it opens (and migrates) here: with
 * DATABASE_URL, or with the embedded database when no server holds the data directory.
 * `cli-commands.ts` imports this module only when it needs it.
 */
import { runCommand } from './admin/commands.ts';
import type { Config } from './config.ts';
import { openStorage, storageTargetFor } from './db/client.ts';
import { createLogger } from './platform/logger.ts';
import { createServices } from './services.ts';

/**
 * Open storage, migrate, run admin command `name`, close.
 *
 * @throws DataDirLockedError when a server took the data directory meanwhile; UsageError for a
 *   refused command.
 */
export async function runLocally(config: Config, name: string, args: unknown): Promise<unknown> {
  const storage = await openStorage(storageTargetFor(config));
  try {
    await storage.migrate();
    const services = createServices({ config, storage, logger: createLogger('silent') });
    try {
      return await runCommand(services, name, args);
    } finally {
      // Only a command that queues (webhook test) started anything; the rest has nothing to stop.
      await services.stop();
    }
  } finally {
    await storage.close();
  }
}
