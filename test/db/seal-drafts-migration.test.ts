/**
 * Drafts stored in clear by the previous schema are sealed without loss, on both backends: a
 * database migrated to the schema before drafts were sealed holds drafts (text and template,
 * sent and not); the current migrations and the start-up pass (`prepareSealedValues`) leave each
 * row's `content` sealed, its clear columns empty, and the draft reading as it was.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { countKeyUses, prepareSealedValues } from '../../src/db/sealing.ts';
import { createDraftsService } from '../../src/messaging/drafts/drafts-service.ts';
import { createKeyring, generateKeyEntry, parseKeySpec } from '../../src/platform/keyring.ts';
import { queryRows } from '../helpers/sql.ts';
import { migrateTo, migrationTargets, previousMigrations } from '../helpers/previous-schema.ts';

/** The last migration of the schema before drafts were sealed. */
const PREVIOUS = '0015_outbound_media';

for (const target of migrationTargets) {
  describe(`sealing drafts stored in clear (${target.name})`, () => {
    test('the previous schema’s drafts are sealed at start, nothing lost', async (t) => {
      const storage = await target.open(t);
      t.after(() => storage.close());
      await migrateTo(storage, previousMigrations(t, PREVIOUS));
      const [portal] = await queryRows<{ id: number }>(
        storage,
        sql`insert into portals (portal_code, name) values ('700001', 'Old drafts') returning id`,
      );
      const portalId = portal!.id;
      const text = {
        type: 'text',
        text: { body: 'Sale starts Monday, Zelda' },
      };
      const template = {
        type: 'template',
        template: {
          name: 'greeting',
          language: 'en_US',
          parameters: ['Zelda', { contact: 'firstName', fallback: 'friend' }],
        },
      };
      const recipients = { contactIds: ['ctc_old1'], phones: ['+16505550123'], tag: 'vip' };
      for (const [id, message, sent] of [
        ['drf_oldtext', text, false],
        ['drf_oldtemplate', template, true],
      ] as const)
        await storage.db.execute(sql`insert into message_drafts
          (id, portal_id, message, recipients, sent_at, send_result)
          values (${id}, ${portalId}, ${JSON.stringify(message)}::jsonb,
            ${JSON.stringify(recipients)}::jsonb, ${sent ? sql`now()` : null},
            ${sent ? JSON.stringify({ queued: 2, refused: 0 }) : null}::jsonb)`);

      await storage.migrate();
      const keyring = createKeyring(parseKeySpec(generateKeyEntry('k1')));
      assert.deepEqual(
        (await countKeyUses(storage.db)).filter((u) => u.column === 'message_drafts.content'),
        [{ column: 'message_drafts.content', keyId: null, rows: 2 }],
        'both drafts are counted as in clear before the pass',
      );
      await prepareSealedValues(storage.db, keyring);

      const rows = await queryRows<Record<string, unknown>>(
        storage,
        sql`select * from message_drafts order by id`,
      );
      assert.equal(rows.length, 2);
      for (const row of rows) {
        assert.equal(row.message, null);
        assert.equal(row.recipients, null);
        assert.equal((row.content as { keyId: string }).keyId, 'k1');
        assert.ok(!JSON.stringify(row).includes('Zelda'), 'no draft text in clear');
        assert.ok(!JSON.stringify(row).includes('6505550123'), 'no phone in clear');
      }
      const drafts = createDraftsService({
        db: storage.db,
        keyring,
        isConnected: async () => true,
      });
      const principal = { portalId };
      const readText = await drafts.getDraft(principal, 'drf_oldtext');
      assert.deepEqual(
        { type: readText.type, text: readText.text, recipients: readText.recipients },
        { ...text, recipients },
      );
      const readTemplate = await drafts.getDraft(principal, 'drf_oldtemplate');
      assert.deepEqual(readTemplate.template, template.template);
      assert.deepEqual(readTemplate.sendResult, { queued: 2, refused: 0 });
      assert.ok(readTemplate.sentAt);
      // A second start seals nothing more and changes nothing.
      await prepareSealedValues(storage.db, keyring);
      const again = await queryRows<Record<string, unknown>>(
        storage,
        sql`select * from message_drafts order by id`,
      );
      assert.deepEqual(again, rows);
    });
  });
}
