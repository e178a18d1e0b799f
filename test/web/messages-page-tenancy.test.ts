/**
 * The `/messages` page lists its own portal's messages only: portal A's sent message shows on
 * A's page and never on portal B's.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { users } from '../../src/db/schema/index.ts';
import { hashPassword } from '../../src/platform/passwords.ts';
import { hello, messagingSetup } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';

const TO = '+16505550199';

for (const backend of backends()) {
  describe(`/messages across portals (${backend.name})`, () => {
    test("portal A's message shows on A's page, never on B's", async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const sent = await s.send(hello(TO, s.numbers[0]!));
      assert.equal(sent.statusCode, 202, sent.body);
      const id: string = sent.json().data.id;

      const [a] = await s.services.storage.db
        .update(users)
        .set({ passwordHash: await hashPassword(TEST_PASSWORD) })
        .where(eq(users.portalId, s.portalId))
        .returning({ email: users.email });
      const b = await portalWithPassword(s.services);

      const mine = new Browser(s.app);
      await mine.signIn(a!.email);
      const own = await mine.get('/messages');
      assert.equal(own.statusCode, 200);
      assert.ok(own.body.includes('6505550199'), "A's page lists A's message");

      const other = new Browser(s.app);
      await other.signIn(b.email);
      const page = await other.get('/messages');
      assert.equal(page.statusCode, 200);
      assert.ok(!page.body.includes('6505550199'), "B's page does not list A's message");
      assert.ok(!page.body.includes(id));
    });
  });
}
