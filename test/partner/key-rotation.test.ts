/**
 * `keys rotate` over every sealed value (docs/security.md, invariant 11), on both backends: a portal with a
 * provider token, a webhook secret mid-rotation, messages both ways, an uploaded medium's file
 * name, webhook events and a draft, all sealed under an old key. Before the rotation, a keyring
 * without the old key is refused at start-up with the tables and counts; the rotation runs in
 * limited, resumable runs with progress; after it, the old key is gone from the database (a dump
 * names it nowhere), `keys check` says it can go, and with only the new key everything reads.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { buildApp } from '../../src/app.ts';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { runCommand } from '../../src/cli/commands.ts';
import { SEALED_COLUMNS } from '../../src/db/sealed-columns.ts';
import { countKeyUses, RetiredKeyInUseError, type ColumnReseal } from '../../src/db/sealing.ts';
import { createKeyring, generateKeyEntry, parseKeySpec } from '../../src/platform/keyring.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createServices } from '../../src/services.ts';
import { testConfig } from '../helpers/app.ts';
import { PDF, upload } from '../helpers/media.ts';
import { messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

const OLD = 'retiredk1';

/** Every row of every table as JSON text: what a dump of the database would show. */
async function dumpDatabase(s: MessagingSetup): Promise<string> {
  const tables = await queryRows<{ schema: string; name: string }>(
    s.services.storage,
    sql`select table_schema as schema, table_name as name from information_schema.tables
        where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
  );
  const out: string[] = [];
  for (const { schema, name } of tables) {
    const rows = await queryRows<{ row: unknown }>(
      s.services.storage,
      sql.raw(`select row_to_json(t)::text as row from "${schema}"."${name}" t`),
    );
    out.push(...rows.map((r) => String(r.row)));
  }
  return out.join('\n');
}

for (const backend of backends()) {
  describe(`keys rotate over every sealed value (${backend.name})`, () => {
    test('refused without the old key before the rotation; after it the old key can go and everything reads', async (t) => {
      const oldKey = generateKeyEntry(OLD);
      const newKey = generateKeyEntry('new');
      const s = await messagingSetup(t, backend, {
        workers: false,
        env: { TOKEN_ENCRYPTION_KEYS: oldKey },
      });
      const auth = { authorization: s.token };
      await s.services.webhooks.start();
      // A webhook secret mid-rotation (current and previous), and events that carry content.
      const { endpoint } = await s.services.webhooks.addEndpoint(
        s.portalId,
        { url: 'https://example.com/hook', eventTypes: ['message.received'] },
        { actor: CLI_ACTOR },
      );
      await s.services.webhooks.rotateSecret(s.portalId, endpoint.id, { actor: CLI_ACTOR });
      await s.services.messaging.webhookSink.inboundMessages(s.portalId, s.numbers[0]!, [
        {
          wamid: 'wamid.rotate',
          from: '16505550101',
          timestamp: new Date(),
          type: 'text',
          content: { type: 'text', text: { body: 'Thanks, see you' } },
        },
      ]);
      const sent = await s.send({
        to: '+16505550101',
        from: s.numbers[0],
        type: 'text',
        text: { body: 'Your parcel is on its way' },
      });
      assert.equal(sent.statusCode, 202, sent.body);
      const uploaded = await upload(s, {
        file: { bytes: PDF, name: 'invoice-rotation.pdf', type: 'application/pdf' },
        phoneNumberId: s.numbers[0]!,
      });
      assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
      const draft = await s.app.inject({
        method: 'POST',
        url: '/api/v1/external/messaging/drafts',
        headers: auth,
        payload: {
          type: 'text',
          text: { body: 'Draft text' },
          recipients: { phones: ['+16505550102'] },
        },
      });
      assert.equal(draft.statusCode, 201, draft.body);
      const [conversation] = (
        await s.app.inject({ url: '/api/v1/external/messaging/conversations', headers: auth })
      ).json().data.items;
      const note = await s.app.inject({
        method: 'POST',
        url: `/api/v1/external/messaging/conversations/${conversation.id}/notes`,
        headers: auth,
        payload: { body: 'Private: call back on Monday' },
      });
      assert.equal(note.statusCode, 201, note.body);
      const campaign = await s.app.inject({
        method: 'POST',
        url: '/api/v1/external/messaging/campaigns',
        headers: auth,
        payload: {
          name: 'Rotation',
          from: s.numbers[0],
          template: { name: 'greeting', language: 'en_US', parameters: ['there'] },
          audience: { contactIds: [conversation.contact.id] },
        },
      });
      assert.equal(campaign.statusCode, 201, campaign.body);

      // The fixture covers the registry: every sealed column has a value under the old key.
      const before = await countKeyUses(s.services.storage.db);
      for (const c of SEALED_COLUMNS)
        assert.ok(
          before.some((u) => u.column === c.name && u.keyId === OLD),
          `${c.name} has a value under the old key`,
        );

      const withKeys = (keys: string) =>
        createServices({
          config: testConfig({ ...s.provider.env, TOKEN_ENCRYPTION_KEYS: keys }),
          storage: s.services.storage,
          logger: createLogger('silent'),
        });
      // The old key removed too early: start-up refuses, naming tables and counts.
      const early = withKeys(newKey);
      await assert.rejects(early.start(), (err: unknown) => {
        assert.ok(err instanceof RetiredKeyInUseError);
        // One outbound and one inbound message: one column holds both directions.
        assert.match(err.message, /messages\.content 2 under retiredk1/);
        assert.match(err.message, /message_drafts\.content 1 under retiredk1/);
        assert.match(err.message, /connections\.token 1 under retiredk1/);
        assert.ok(!err.message.includes('parcel'));
        return true;
      });

      const both = withKeys(`${newKey},${oldKey}`);
      const checked = (await runCommand(both, 'keys check', {})) as {
        removable: string[];
        remaining: number;
      };
      assert.deepEqual(checked.removable, []);
      const total = before.reduce((n, u) => n + u.rows, 0);
      assert.equal(checked.remaining, total);

      // A first run limited to 3 values: stops with the rest left; the next run resumes.
      const first = (await runCommand(both, 'keys rotate', { max: 3 })) as {
        remaining: number;
        columns: ColumnReseal[];
      };
      assert.equal(
        first.columns.reduce((n, c) => n + c.resealed, 0),
        3,
      );
      assert.equal(first.remaining, total - 3);
      const progress: ColumnReseal[] = [];
      const rest = await both.partner.rotateKeys(CLI_ACTOR, {
        onProgress: (p) => progress.push(p),
      });
      assert.equal(rest.remaining, 0);
      assert.equal(
        rest.columns.reduce((n, c) => n + c.resealed, 0),
        total - 3,
      );
      assert.ok(progress.some((p) => p.column === 'messages.content' && p.resealed === 2));
      const after = (await runCommand(both, 'keys check', {})) as {
        removable: string[];
        remaining: number;
      };
      assert.deepEqual(after, { ...after, removable: [OLD], remaining: 0 });
      assert.ok(!(await dumpDatabase(s)).includes(OLD), 'no row names the old key');

      // Only the new key listed: starts, and every sealed value opens.
      const onlyNew = withKeys(newKey);
      t.after(() => onlyNew.stop());
      await onlyNew.start();
      const keyring = createKeyring(parseKeySpec(newKey));
      for (const c of SEALED_COLUMNS) {
        const rows = await queryRows<{ key: string | number; portal_id: number; sealed: never }>(
          s.services.storage,
          sql`select ${c.key} as key, ${c.portalId} as portal_id, ${c.sealed} as sealed
              from ${c.table} where ${c.keyId} is not null`,
        );
        for (const r of rows)
          keyring.open(
            r.sealed,
            r.portal_id,
            c.purpose,
            c.subjectIsKey ? String(r.key) : undefined,
          );
      }
      const app = await buildApp({ services: onlyNew, logger: createLogger('silent') });
      t.after(() => app.close());
      const messages = await app.inject({
        url: '/api/v1/external/messaging/messages?direction=inbound',
        headers: auth,
      });
      assert.equal(messages.statusCode, 200, messages.body);
      assert.ok(messages.body.includes('Thanks, see you'), 'the inbound text reads');
      assert.ok(!messages.body.includes('contentErased'), 'nothing reads as erased');
      const notes = await app.inject({
        url: `/api/v1/external/messaging/conversations/${conversation.id}/notes`,
        headers: auth,
      });
      assert.ok(notes.body.includes('call back on Monday'), 'the note reads');
      assert.equal((await onlyNew.partner.fetchProviderProfile(s.portalId)).id !== '', true);
      const rows = await queryRows<{ reason: string }>(
        s.services.storage,
        sql`select reason from audit_events where action = 'encryption_key.rotated' order by id`,
      );
      assert.match(rows[0]!.reason, /^re-sealed 3 value\(s\) under key new; \d+ left/);
    });
  });
}
