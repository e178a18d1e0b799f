/**
 * A person's messages for the inbox tests, stored as messaging stores them (sealed content, the
 * conversation row), without the provider.
 */
import assert from 'node:assert/strict';
import { and, eq } from 'drizzle-orm';
import { conversations, media } from '../../src/db/schema/conversations.ts';
import { messages } from '../../src/db/schema/messages.ts';
import {
  findConversation,
  recordConversationMessage,
} from '../../src/messaging/conversations/conversations-repository.ts';
import { sealContent } from '../../src/messaging/store/message-content.ts';
import { newMessageId } from '../../src/messaging/outbound/message-sending.ts';
import { loadKeyring } from '../../src/platform/keyring.ts';
import type { Services } from '../../src/services.ts';

/**
 * A person's text (and, with `image`, a photo; with `reaction`, then a reaction with that emoji
 * to the text) stored as messaging stores them.
 */
export async function personWrites(
  services: Services,
  portalId: number,
  input: {
    phone: string;
    firstName?: string;
    text: string;
    image?: boolean;
    reaction?: string;
    phoneNumberId?: string;
    /** How long ago the person wrote (default a minute). */
    agoMs?: number;
  },
) {
  const keyring = loadKeyring(services.config);
  const contact = await services.contacts.createContact({
    principal: { portalId },
    input: { phone: input.phone, ...(input.firstName && { firstName: input.firstName }) },
  });
  const contactId = contact.body.data.id;
  const phoneNumberId = input.phoneNumberId ?? '100200300';
  const db = services.storage.db;
  const store = async (at: Date, content: Parameters<typeof sealContent>[3], mediaId?: string) => {
    const id = newMessageId();
    await db.transaction(async (tx) => {
      await tx.insert(messages).values({
        id,
        portalId,
        direction: 'inbound',
        contactId,
        waId: input.phone,
        phoneNumberId,
        providerMessageId: `wamid.${id}`,
        type: (content as { type: string }).type,
        content: sealContent(keyring, portalId, id, content),
        mediaId,
        createdAt: at,
        storedAt: new Date(),
      });
      if (mediaId)
        await tx.insert(media).values({
          id: mediaId,
          portalId,
          messageId: id,
          providerMediaId: `m${id}`,
          mimeType: 'image/jpeg',
        });
      await recordConversationMessage(tx, {
        portalId,
        contactId,
        phoneNumberId,
        messageId: id,
        direction: 'inbound',
        at,
      });
    });
    return id;
  };
  const now = Date.now();
  const textId = await store(new Date(now - (input.agoMs ?? 60_000)), {
    type: 'text',
    text: { body: input.text },
  });
  if (input.image)
    await store(
      new Date(now - 30_000),
      {
        type: 'image',
        media: { id: 'provider-media', mimeType: 'image/jpeg', caption: 'the parcel' },
      } as Parameters<typeof sealContent>[3],
      `med_${textId.slice(4, 20)}`,
    );
  if (input.reaction)
    await store(new Date(now - 15_000), {
      type: 'reaction',
      reaction: { providerMessageId: `wamid.${textId}`, emoji: input.reaction },
    });
  const rows = await db
    .select({ id: conversations.id })
    .from(conversations)
    .where(and(eq(conversations.portalId, portalId), eq(conversations.contactId, contactId)));
  assert.equal(rows.length, 1);
  assert.ok(await findConversation(db, portalId, rows[0]!.id));
  return { contactId, conversationId: rows[0]!.id };
}
