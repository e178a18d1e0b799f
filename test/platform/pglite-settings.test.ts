/**
 * The embedded database's buffer pool is PGLITE_SHARED_BUFFERS, on a data directory (new and
 * reopened) and in memory (src/db/client.ts): initdb's 128 MB would cost its whole size in
 * resident memory at every start.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStorage, PGLITE_SHARED_BUFFERS, type StorageTarget } from '../../src/db/client.ts';
import { tempDataDir } from '../helpers/spawn.ts';

async function sharedBuffers(target: StorageTarget): Promise<string> {
  const storage = await openStorage(target);
  try {
    const { rows } = await storage.pglite!.query<{ shared_buffers: string }>('show shared_buffers');
    return rows[0]!.shared_buffers;
  } finally {
    await storage.close();
  }
}

test('a data directory, new and reopened, and an in-memory database use the smaller pool', async () => {
  const dataDir = tempDataDir();
  assert.equal(await sharedBuffers({ kind: 'pglite', dataDir }), PGLITE_SHARED_BUFFERS);
  assert.equal(await sharedBuffers({ kind: 'pglite', dataDir }), PGLITE_SHARED_BUFFERS);
  assert.equal(await sharedBuffers({ kind: 'pglite-memory' }), PGLITE_SHARED_BUFFERS);
});
