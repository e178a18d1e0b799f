/**
 * Media a portal may send by our id (`med_…`): the lookup the send checks and the delivery
 * worker use to map it to the provider's media id. Here: the media people sent to the portal
 * (`media` rows of inbound messages), sendable from the business number they were sent to for
 * the 30 days the provider keeps a medium.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media
 * @see docs/messaging.md "Media"
 */
import { and, eq } from 'drizzle-orm';
import { inboundMessages, media } from '../../db/schema/conversations.ts';
import type { Db } from '../messages/messages-repository.ts';

/** How long the provider keeps a medium (ms). */
const MEDIA_LIFETIME_MS = 30 * 24 * 3600 * 1000;

const KINDS = ['image', 'video', 'audio', 'document', 'sticker'] as const;

/** A medium that can be sent now, from `phoneNumberId`, until `expiresAt`. */
export type SendableMedium = {
  id: string;
  providerMediaId: string;
  mimeType: string;
  kind: 'image' | 'video' | 'audio' | 'document' | 'sticker';
  /** Bytes. */
  size: number;
  fileName: string | null;
  phoneNumberId: string;
  expiresAt: Date;
};

/**
 * The medium `id` of `portalId`, if it can be sent.
 *
 * @returns null for an unknown id, another portal's, or an expired one.
 */
export async function findSendableMedium(
  db: Db,
  portalId: number,
  id: string,
): Promise<SendableMedium | null> {
  const [row] = await db
    .select({
      id: media.id,
      providerMediaId: media.providerMediaId,
      mimeType: media.mimeType,
      size: media.fileSize,
      createdAt: media.createdAt,
      type: inboundMessages.type,
      phoneNumberId: inboundMessages.phoneNumberId,
    })
    .from(media)
    .innerJoin(
      inboundMessages,
      and(eq(inboundMessages.portalId, media.portalId), eq(inboundMessages.id, media.messageId)),
    )
    .where(and(eq(media.portalId, portalId), eq(media.id, id)));
  const kind = KINDS.find((k) => k === row?.type);
  if (!row || !kind) return null;
  const expiresAt = new Date(row.createdAt.getTime() + MEDIA_LIFETIME_MS);
  if (expiresAt <= new Date()) return null;
  return {
    id: row.id,
    providerMediaId: row.providerMediaId,
    mimeType: row.mimeType,
    kind,
    size: row.size ?? 0,
    fileName: null,
    phoneNumberId: row.phoneNumberId,
    expiresAt,
  };
}
