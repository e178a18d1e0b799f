/**
 * Write the external API's OpenAPI document to a file (default: a temporary one; the path is
 * printed), built from the app's routes without listening: in-memory storage, no network.
 * `npm run lint:openapi` runs Spectral on it.
 *
 * Usage: node --import tsx scripts/openapi-document.ts [out.json]
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config.ts';
import { openStorage } from '../src/db/client.ts';
import { createLogger } from '../src/platform/logger.ts';
import { createServices } from '../src/services.ts';

const out =
  process.argv[2] ?? join(mkdtempSync(join(tmpdir(), 'portico-openapi-')), 'openapi.json');
const config = parseConfig({
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  DATA_DIR: mkdtempSync(join(tmpdir(), 'portico-openapi-data-')),
});
const storage = await openStorage({ kind: 'pglite-memory' });
try {
  await storage.migrate();
  const logger = createLogger('silent');
  const app = await buildApp({ services: createServices({ config, storage, logger }), logger });
  await app.ready();
  writeFileSync(out, `${JSON.stringify(app.swagger(), null, 2)}\n`);
  await app.close();
} finally {
  await storage.close();
}
process.stdout.write(`${out}\n`);
