/**
 * A full disk under the embedded database (PGlite in a data directory): writes that need space
 * get 503 `unavailable` with `Retry-After`, reads keep working, nothing ends the process, and
 * the same write succeeds once space returns. The data directory is on a tmpfs of 96 MiB
 * mounted for the test (root only: elsewhere the test is skipped, saying why), filled with a
 * file until the kernel answers ENOSPC; PostgreSQL then refuses to extend a table (SQLSTATE
 * 53100, disk_full).
 *
 * @see docs/decisions/0035-process-fault-policy.md
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openStorage } from '../../src/db/client.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';

/** Mount a tmpfs of `size` at a new directory; the reason when this machine does not let us. */
function mountTmpfs(size: string): { dir: string } | { reason: string } {
  if (process.getuid?.() !== 0) return { reason: 'mounting a tmpfs needs root' };
  const dir = mkdtempSync(join(tmpdir(), 'portico-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: `mount -t tmpfs failed: ${String((err as Error).message).slice(0, 200)}` };
  }
}

/** Write zeros to `file` until the file system is full (ENOSPC). */
function fill(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(1024 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}

test('a full disk under PGlite gives 503s, the server keeps serving, and writes work again once space returns', async (t) => {
  const mounted = mountTmpfs('96m');
  if ('reason' in mounted) {
    t.skip(mounted.reason);
    return;
  }
  const { dir } = mounted;
  t.after(() => {
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  const backend = {
    name: 'pglite' as const,
    async open() {
      const storage = await openStorage({ kind: 'pglite', dataDir: join(dir, 'data') });
      await storage.migrate();
      return storage;
    },
  };
  const { app, services } = await buildTestApp(t, backend);
  const portal = await createPortal(services);
  let batch = 0;
  /** An import of 1,000 new contacts: enough new rows that their tables must grow. */
  const importContacts = () => {
    const b = batch++;
    return app.inject({
      method: 'POST',
      url: '/api/v1/external/crm/contacts/import',
      headers: { authorization: portal.token },
      payload: {
        contacts: Array.from({ length: 1000 }, (_, i) => ({
          phone: `+1650${200 + b}${String(i).padStart(4, '0')}`,
          firstName: `Person ${i} with a name long enough to take some room`,
        })),
      },
    });
  };
  const before = await importContacts();
  assert.equal(before.statusCode, 200, before.body);
  assert.deepEqual(before.json<{ data: { failed: unknown[] } }>().data.failed, []);

  const filler = join(dir, 'filler');
  fill(filler);
  // Imports until one needs a new page of a table or index (bounded: the free space left in
  // the pages already allocated is far less than 80 imports).
  let refused;
  for (let i = 0; i < 80 && !refused; i++) {
    const res = await importContacts();
    if (res.statusCode !== 200) refused = res;
  }
  assert.ok(refused, 'an import was refused on the full disk');
  assert.equal(refused.statusCode, 503, refused.body);
  assert.equal(refused.json<{ error: { code: string } }>().error.code, 'unavailable');
  assert.ok(refused.headers['retry-after'], 'Retry-After is sent');
  // Reads keep being served.
  const verify = await app.inject({
    method: 'GET',
    url: '/api/v1/external/auth/verify',
    headers: { authorization: portal.token },
  });
  assert.equal(verify.statusCode, 200, verify.body);

  // Space returns: the same kind of write succeeds, with no restart.
  rmSync(filler);
  const after = await importContacts();
  assert.equal(after.statusCode, 200, after.body);
  const page = await services.contacts.listContacts(
    { portalId: await services.accounts.portalIdFor(portal.portalCode) },
    { limit: 1 },
  );
  assert.equal(page.items.length, 1);
});
