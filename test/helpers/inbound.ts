/**
 * Inbound messages for tests of what is done with them (media, read receipts): a person writes
 * from the sandbox phone (its signed webhook reaches the app), and the message's rows are made
 * sure of — taken as the webhook's ingestion stored them, or written here as it stores them
 * (`messages`, `media`, the conversation's unread count) when it did not.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { InboundMessage } from '../../src/sandbox-provider/inbound-message.ts';
import type { MessagingSetup } from './messaging.ts';
import { queryRows } from './sql.ts';

const MEDIA_TYPES = new Set(['image', 'audio', 'video', 'document', 'sticker']);

export interface Written {
  wamid: string;
  /** Our message (`msg_…`). */
  id: string;
  contactId: string;
  /** Our medium (`med_…`), for a media message. */
  mediaId?: string;
  /** The provider's media id and the bytes it holds, for a media message. */
  providerMediaId?: string;
  bytes?: Buffer;
}

const randomId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/**
 * A person (`from`, digits) writes `message` (a Cloud API inbound message without id, from and
 * timestamp; default a text) to the portal's first number; the rows of the message, made sure of.
 */
export async function personWrites(
  s: MessagingSetup,
  from: string,
  message: InboundMessage = { type: 'text', text: { body: 'hello' } },
  phoneNumberId = s.numbers[0]!,
): Promise<Written> {
  const out = await s.provider.sandbox.cloud.writeIn({ phoneNumberId, from, message });
  assert.ok(out.ok, JSON.stringify(out));
  const wamid = out.wamid;
  const item = s.provider.sandbox.cloud.messages.find((m) => m.wamid === wamid)!.inbound!;
  const storage = s.services.storage;
  const [contact] = await queryRows<{ id: string }>(
    storage,
    sql`select id from contacts where portal_id = ${s.portalId} and phone = ${`+${from}`}`,
  );
  assert.ok(contact, 'the webhook made the contact');
  const stored = await queryRows<{ id: string }>(
    storage,
    sql`select id from messages
      where portal_id = ${s.portalId} and direction = 'inbound' and provider_message_id = ${wamid}`,
  );
  const id = stored[0]?.id ?? randomId('msg');
  const medium = MEDIA_TYPES.has(message.type)
    ? (item[message.type] as { id: string; mime_type: string; sha256: string })
    : undefined;
  if (stored.length === 0) {
    const mediaId = medium ? randomId('med') : null;
    await queryRows(
      storage,
      sql`insert into messages
          (id, portal_id, direction, contact_id, wa_id, phone_number_id, provider_message_id,
           type, media_id, stored_at, created_at)
        values (${id}, ${s.portalId}, 'inbound', ${contact.id}, ${`+${from}`}, ${phoneNumberId},
          ${wamid}, ${message.type}, ${mediaId}, now(), now())`,
    );
    if (medium)
      await queryRows(
        storage,
        sql`insert into media (id, portal_id, message_id, provider_media_id, mime_type, sha256)
          values (${mediaId}, ${s.portalId}, ${id}, ${medium.id}, ${medium.mime_type},
            ${Buffer.from(medium.sha256, 'base64').toString('hex')})`,
      );
    await queryRows(
      storage,
      sql`insert into conversations (id, portal_id, contact_id, phone_number_id, last_message_id,
          last_message_at, last_direction, unread_count, last_inbound_at)
        values (${randomId('cnv')}, ${s.portalId}, ${contact.id}, ${phoneNumberId}, ${id}, now(),
          'inbound', 1, now())
        on conflict (portal_id, contact_id, phone_number_id) do update
          set unread_count = conversations.unread_count + 1, last_message_id = excluded.last_message_id,
            last_message_at = excluded.last_message_at`,
    );
  }
  const [row] = await queryRows<{ media_id: string | null }>(
    storage,
    sql`select media_id from messages where portal_id = ${s.portalId} and id = ${id}`,
  );
  return {
    wamid,
    id,
    contactId: contact.id,
    ...(medium &&
      row?.media_id && {
        mediaId: row.media_id,
        providerMediaId: medium.id,
        bytes: s.provider.sandbox.cloud.medium(medium.id)!.bytes,
      }),
  };
}

/** The conversation's unread count, and each message's `read_at` (null when unread). */
export async function readState(s: MessagingSetup, w: Pick<Written, 'contactId'>) {
  const [conversation] = await queryRows<{ unread_count: number }>(
    s.services.storage,
    sql`select unread_count from conversations
      where portal_id = ${s.portalId} and contact_id = ${w.contactId}`,
  );
  const messages = await queryRows<{ id: string; read_at: unknown }>(
    s.services.storage,
    sql`select id, read_at from messages
      where portal_id = ${s.portalId} and contact_id = ${w.contactId} and direction = 'inbound'
      order by created_at, stored_at`,
  );
  return { unread: Number(conversation?.unread_count), messages };
}
