/**
 * Messages of both directions move into one table without loss, on both backends: a database
 * migrated to the schema with two message tables (`messages` outbound, `inbound_messages`)
 * holds messages of each direction (sealed content, older plaintext columns, a medium, a reply,
 * a reaction, a read mark, an expired content, another portal's message); after the current
 * migrations every message reads through the API's read path (the list of both directions, one
 * message by id, a conversation's thread) exactly as it was stored, its sealed content still
 * opening (ids did not change), and the old table is gone with the new indexes in its place.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { listConversationPage } from '../../src/messaging/conversations/conversations-repository.ts';
import {
  findAnyMessage,
  listBothDirections,
  messagePage,
} from '../../src/messaging/conversations/message-list.ts';
import { sealContent } from '../../src/messaging/store/message-content.ts';
import { createKeyring, generateKeyEntry, parseKeySpec } from '../../src/platform/keyring.ts';
import type { Logger } from '../../src/platform/logger.ts';
import { queryRows } from '../helpers/sql.ts';
import { migrateTo, migrationTargets, previousMigrations } from '../helpers/previous-schema.ts';

/** The last migration of the schema with a table per direction. */
const PREVIOUS = '0023_account_signals';

const T0 = Date.parse('2026-11-20T10:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const PHONE = '+16505550123';
const NUMBER = '1055500001';

for (const target of migrationTargets) {
  describe(`one message table from two (${target.name})`, () => {
    test('both directions’ rows read through the API unchanged after the migration', async (t) => {
      const storage = await target.open(t);
      t.after(() => storage.close());
      await migrateTo(storage, previousMigrations(t, PREVIOUS));
      const keyring = createKeyring(parseKeySpec(generateKeyEntry('k1')));
      const db = storage.db;
      const portalIds: number[] = [];
      for (const code of ['700101', '700102']) {
        const [p] = await queryRows<{ id: number }>(
          storage,
          sql`insert into portals (portal_code, name) values (${code}, 'Two tables') returning id`,
        );
        portalIds.push(p!.id);
      }
      const [portalId, otherId] = portalIds as [number, number];
      await db.execute(sql`insert into contacts (id, portal_id, phone, first_name)
        values ('ctc_zelda', ${portalId}, ${PHONE}, 'Zelda'),
          ('ctc_other', ${otherId}, ${PHONE}, 'Other')`);

      const seal = (id: string, content: Parameters<typeof sealContent>[3], portal = portalId) =>
        JSON.stringify(sealContent(keyring, portal, id, content));
      // Outbound, as the previous schema stored them.
      await db.execute(sql`insert into messages (id, portal_id, contact_id, "to", "from", type,
          content, status, provider_message_id, queued_at, sent_at, delivered_at, read_at,
          price_minor, currency, created_at)
        values ('msg_outText', ${portalId}, 'ctc_zelda', ${PHONE}, ${NUMBER}, 'text',
          ${seal('msg_outText', { text: { body: 'Sale starts Monday, Zelda' } })}::jsonb, 'read',
          'wamid.OUT1', ${at(60)}, ${at(61)}, ${at(62)}, ${at(63)}, 5, 'EUR', ${at(60)})`);
      await db.execute(sql`insert into messages (id, portal_id, contact_id, "to", "from", type,
          template_name, template_language, template_category, template_parameters, status,
          provider_message_id, send_attempted_at, queued_at, sent_at, failed_at, error_code,
          error_title, price_minor, currency, created_at)
        values ('msg_outTemplate', ${portalId}, 'ctc_zelda', ${PHONE}, ${NUMBER}, 'template',
          'greeting', 'en_US', 'MARKETING', ${JSON.stringify(['Zelda'])}::jsonb, 'failed',
          'wamid.OUT2', ${at(120)}, ${at(120)}, ${at(121)}, ${at(122)}, '131026',
          'Message undeliverable', 12, 'EUR', ${at(120)})`);
      await db.execute(sql`insert into messages (id, portal_id, contact_id, "to", "from", type,
          text_body, status, queued_at, price_minor, currency, created_at)
        values ('msg_outQueued', ${portalId}, null, '+16505550999', ${NUMBER}, 'text',
          'Plain older text', 'queued', ${at(180)}, 0, 'EUR', ${at(180)})`);
      // Inbound, as the previous schema stored them.
      const inbound = async (
        id: string,
        portal: number,
        values: {
          wamid: string;
          type: string;
          content: string | null;
          receivedAt: string;
          mediaId?: string;
          context?: [string, string | null];
          readAt?: string;
        },
      ) =>
        db.execute(sql`insert into inbound_messages (id, portal_id, contact_id, "from",
            phone_number_id, provider_message_id, type, content, media_id,
            context_provider_message_id, context_message_id, received_at, read_at, created_at)
          values (${id}, ${portal}, ${portal === portalId ? 'ctc_zelda' : 'ctc_other'}, ${PHONE},
            ${NUMBER}, ${values.wamid}, ${values.type}, ${values.content}::jsonb,
            ${values.mediaId ?? null}, ${values.context?.[0] ?? null},
            ${values.context?.[1] ?? null}, ${values.receivedAt}, ${values.readAt ?? null},
            ${at(900)})`);
      await inbound('msg_inText', portalId, {
        wamid: 'wamid.IN1',
        type: 'text',
        content: seal('msg_inText', { type: 'text', text: { body: 'Hello, is it open?' } }),
        receivedAt: at(0),
        readAt: at(30),
      });
      await inbound('msg_inImage', portalId, {
        wamid: 'wamid.IN2',
        type: 'image',
        content: seal('msg_inImage', {
          type: 'image',
          media: { providerMediaId: '1003383421387256', mimeType: 'image/jpeg', caption: 'Look' },
        }),
        receivedAt: at(90),
        mediaId: 'med_image',
      });
      await db.execute(sql`insert into media (id, portal_id, direction, message_id,
          provider_media_id, mime_type, sha256, file_size)
        values ('med_image', ${portalId}, 'inbound', 'msg_inImage', '1003383421387256',
          'image/jpeg', 'ab12', 2048)`);
      await inbound('msg_inReply', portalId, {
        wamid: 'wamid.IN3',
        type: 'text',
        content: seal('msg_inReply', {
          type: 'text',
          text: { body: 'Thanks!' },
          context: { forwarded: false },
        }),
        receivedAt: at(150),
        context: ['wamid.OUT1', 'msg_outText'],
      });
      await inbound('msg_inReaction', portalId, {
        wamid: 'wamid.IN4',
        type: 'reaction',
        content: seal('msg_inReaction', {
          type: 'reaction',
          reaction: { providerMessageId: 'wamid.OUT1', emoji: '👍' },
        }),
        receivedAt: at(200),
        context: ['wamid.OUT1', 'msg_outText'],
      });
      await inbound('msg_inExpired', portalId, {
        wamid: 'wamid.IN5',
        type: 'text',
        content: null,
        receivedAt: at(-3600),
      });
      // Another portal's message, with the same wamid as one of this portal's.
      await inbound('msg_inOther', otherId, {
        wamid: 'wamid.IN1',
        type: 'text',
        content: seal('msg_inOther', { type: 'text', text: { body: 'Elsewhere' } }, otherId),
        receivedAt: at(10),
      });
      await db.execute(sql`insert into conversations (id, portal_id, contact_id, phone_number_id,
          last_message_id, last_message_at, last_direction, unread_count, last_inbound_at)
        values ('cnv_zelda', ${portalId}, 'ctc_zelda', ${NUMBER}, 'msg_inReaction', ${at(200)},
          'inbound', 3, ${at(200)})`);

      await storage.migrate();

      const warnings: unknown[] = [];
      const logger = { warn: (...args: unknown[]) => warnings.push(args) } as Pick<
        Logger,
        'warn'
      > as Logger;
      const deps = { db, keyring, logger };
      const outbound = (id: string, fields: Record<string, unknown>) => ({
        id,
        direction: 'outbound',
        to: PHONE,
        contactId: 'ctc_zelda',
        from: NUMBER,
        sentAt: null,
        deliveredAt: null,
        readAt: null,
        failedAt: null,
        error: null,
        // Provider pricing arrived after this schema: none on migrated rows; a settled message
        // is charged what its ledger captured (none here), a queued one nothing yet.
        pricing: {
          billable: null,
          category: null,
          pricingModel: null,
          type: null,
          charged: fields.status === 'queued' ? null : 0,
        },
        ...fields,
      });
      const inboundView = (id: string, fields: Record<string, unknown>) => ({
        id,
        direction: 'inbound',
        from: PHONE,
        contactId: 'ctc_zelda',
        phoneNumberId: NUMBER,
        type: 'text',
        context: null,
        readAt: null,
        ...fields,
      });
      const expected = [
        inboundView('msg_inReaction', {
          providerMessageId: 'wamid.IN4',
          type: 'reaction',
          reaction: { messageId: 'msg_outText', providerMessageId: 'wamid.OUT1', emoji: '👍' },
          receivedAt: at(200),
        }),
        outbound('msg_outQueued', {
          to: '+16505550999',
          contactId: null,
          type: 'text',
          text: { body: 'Plain older text' },
          status: 'queued',
          providerMessageId: null,
          queuedAt: at(180),
          price: { amount: 0, currency: 'EUR' },
        }),
        inboundView('msg_inReply', {
          providerMessageId: 'wamid.IN3',
          text: { body: 'Thanks!' },
          context: {
            messageId: 'msg_outText',
            providerMessageId: 'wamid.OUT1',
            forwarded: false,
            frequentlyForwarded: false,
          },
          receivedAt: at(150),
        }),
        outbound('msg_outTemplate', {
          type: 'template',
          template: { name: 'greeting', language: 'en_US', parameters: ['Zelda'] },
          status: 'failed',
          providerMessageId: 'wamid.OUT2',
          queuedAt: at(120),
          sentAt: at(121),
          failedAt: at(122),
          error: { code: 131026, title: 'Message undeliverable' },
          price: { amount: 12, currency: 'EUR' },
        }),
        inboundView('msg_inImage', {
          providerMessageId: 'wamid.IN2',
          type: 'image',
          media: {
            id: 'med_image',
            mimeType: 'image/jpeg',
            sha256: 'ab12',
            fileSize: 2048,
            caption: 'Look',
            filename: null,
          },
          receivedAt: at(90),
        }),
        outbound('msg_outText', {
          type: 'text',
          text: { body: 'Sale starts Monday, Zelda' },
          status: 'read',
          providerMessageId: 'wamid.OUT1',
          queuedAt: at(60),
          sentAt: at(61),
          deliveredAt: at(62),
          readAt: at(63),
          price: { amount: 5, currency: 'EUR' },
        }),
        inboundView('msg_inText', {
          providerMessageId: 'wamid.IN1',
          text: { body: 'Hello, is it open?' },
          receivedAt: at(0),
          readAt: at(30),
        }),
        inboundView('msg_inExpired', {
          providerMessageId: 'wamid.IN5',
          contentErased: true,
          receivedAt: at(-3600),
        }),
      ];

      // The list of both directions, page by page, newest first.
      const listed: unknown[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 10; i++) {
        const page = await listBothDirections(deps, portalId, {
          limit: 3,
          ...(cursor !== undefined && { cursor }),
        });
        listed.push(...page.items);
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      assert.deepEqual(listed, expected);
      // Each by id; the filters of one direction.
      for (const message of expected)
        assert.deepEqual(await findAnyMessage(deps, portalId, message.id), message);
      const inboundOnly = await listBothDirections(deps, portalId, {
        limit: 100,
        direction: 'inbound',
      });
      assert.deepEqual(
        inboundOnly.items.map((m) => m.id),
        expected.filter((m) => m.direction === 'inbound').map((m) => m.id),
      );
      const failed = await listBothDirections(deps, portalId, { limit: 100, status: 'failed' });
      assert.deepEqual(
        failed.items.map((m) => m.id),
        ['msg_outTemplate'],
      );
      // The conversation's thread (the inbox's read) and its last message.
      const thread = await messagePage(deps, portalId, {
        limit: 100,
        filter: { contactId: 'ctc_zelda', phoneNumberId: NUMBER },
      });
      assert.deepEqual(
        thread.items,
        expected.filter((m) => m.contactId === 'ctc_zelda'),
      );
      const conversations = await listConversationPage(db, portalId, { limit: 10, filter: {} });
      assert.equal(conversations.rows[0]?.lastType, 'reaction');
      // The other portal's message moved too, and stays its own.
      const other = await listBothDirections(deps, otherId, { limit: 10 });
      assert.deepEqual(
        other.items.map((m) => [m.id, (m as { text?: unknown }).text]),
        [['msg_inOther', { body: 'Elsewhere' }]],
      );
      await assert.rejects(findAnyMessage(deps, otherId, 'msg_inText'), /No message/);
      assert.deepEqual(warnings, [], 'every stored message was shown whole');

      // Nothing lost: every row moved, Portico's storage time kept; the old table is gone.
      const [counts] = await queryRows<{ inbound: number; outbound: number; stored: number }>(
        storage,
        sql`select count(*) filter (where direction = 'inbound')::int as inbound,
            count(*) filter (where direction = 'outbound')::int as outbound,
            count(*) filter (where stored_at = ${at(900)}::timestamptz)::int as stored
          from messages`,
      );
      assert.deepEqual({ ...counts }, { inbound: 6, outbound: 3, stored: 6 });
      const [gone] = await queryRows<{ table: string | null }>(
        storage,
        sql`select to_regclass('public.inbound_messages')::text as table`,
      );
      assert.equal(gone?.table, null);
      const indexes = (
        await queryRows<{ indexname: string }>(
          storage,
          sql`select indexname from pg_indexes where tablename = 'messages' order by indexname`,
        )
      ).map((r) => r.indexname);
      for (const name of [
        'messages_content_expiry',
        'messages_inbound_portal_wamid',
        'messages_portal_contact_page',
        'messages_portal_direction_page',
        'messages_portal_page',
        'messages_portal_status_page',
        'messages_portal_wa_id_page',
        'messages_portal_wamid',
        'messages_queued_attempts',
      ])
        assert.ok(indexes.includes(name), `index ${name}`);
      // A row with another direction's columns is refused.
      await assert.rejects(
        db.execute(sql`insert into messages (id, portal_id, direction, wa_id, phone_number_id,
            type, provider_message_id, stored_at, status)
          values ('msg_mixed', ${portalId}, 'inbound', ${PHONE}, ${NUMBER}, 'text', 'wamid.X',
            now(), 'sent')`),
        (err: Error) => /messages_inbound_columns/.test(String(err.cause)),
      );
    });
  });
}
