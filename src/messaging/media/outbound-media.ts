/**
 * Outbound media: the media a business uploaded (`POST /messaging/media`) to send by our id
 * (`med_…`). A row is written once the provider holds the bytes and answered its media id; the
 * provider keeps an uploaded medium for 30 days, so does its row's `expires_at`. The file name is
 * sealed like message content (purpose `message-content`, the medium id as associated data).
 *
 * Invariants: every read filters by portal id; an expired medium is not sendable; inbound media
 * (a person's) are not sendable by id here (the provider's ids of inbound media are not the
 * business's uploads).
 *
 * @see docs/messaging.md "Media"
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#upload-media
 */
import { and, eq, gt } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { media } from '../../db/schema/conversations.ts';
import { randomBase62 } from '../../platform/crypto.ts';
import type { ContentKeyring } from '../store/message-content.ts';
import type { MediaKind } from './media-kinds.ts';

/** How long the provider keeps an uploaded medium: 30 days, in ms. */
const UPLOADED_MEDIA_TTL_MS = 30 * 24 * 60 * 60 * 1000;

const PURPOSE = 'message-content';

/** An uploaded medium that can be sent now. */
export interface SendableMedium {
  /** Our id, `med_…`. */
  id: string;
  /** The provider's media id (what a Cloud API send names). */
  providerMediaId: string;
  /** The Cloud API's mime type of its content. */
  mimeType: string;
  kind: MediaKind;
  /** Bytes. */
  size: number;
  /** The uploaded file's name; null when not asked for (no keyring given) or none was given. */
  fileName: string | null;
  /** The business number it was uploaded through (the provider's phone number id). */
  phoneNumberId: string;
  /** When the provider no longer has it. */
  expiresAt: Date;
}

/** A new medium id: `med_` + base62. */
export const newMediumId = (): string => `med_${randomBase62(16)}`;

/**
 * The portal's uploaded medium `id`, if it can still be sent.
 *
 * @param keyring opens the file name; without it `fileName` is null.
 * @returns null for an unknown id, another portal's, an inbound medium's, or an expired one.
 */
export async function findSendableMedium(
  db: Database,
  portalId: number,
  id: string,
  keyring?: ContentKeyring,
): Promise<SendableMedium | null> {
  const [row] = await db
    .select()
    .from(media)
    .where(
      and(
        eq(media.portalId, portalId),
        eq(media.id, id),
        eq(media.direction, 'outbound'),
        gt(media.expiresAt, new Date()),
      ),
    );
  if (
    !row ||
    row.kind === null ||
    row.fileSize === null ||
    row.phoneNumberId === null ||
    row.expiresAt === null
  )
    return null;
  return {
    id: row.id,
    providerMediaId: row.providerMediaId,
    mimeType: row.mimeType,
    kind: row.kind,
    size: row.fileSize,
    fileName:
      keyring && row.fileName ? keyring.open(row.fileName, portalId, PURPOSE, row.id) : null,
    phoneNumberId: row.phoneNumberId,
    expiresAt: row.expiresAt,
  };
}

/**
 * Record an upload the provider accepted.
 *
 * @param medium its id (`newMediumId`), what the provider answered, and what was checked.
 * @returns the row's expiry (30 days from `now`).
 */
export async function insertOutboundMedium(
  db: Database,
  keyring: ContentKeyring,
  medium: Omit<SendableMedium, 'expiresAt'> & { portalId: number; now: Date },
): Promise<Date> {
  const expiresAt = new Date(medium.now.getTime() + UPLOADED_MEDIA_TTL_MS);
  await db.insert(media).values({
    id: medium.id,
    portalId: medium.portalId,
    direction: 'outbound',
    providerMediaId: medium.providerMediaId,
    mimeType: medium.mimeType,
    kind: medium.kind,
    fileSize: medium.size,
    fileName:
      medium.fileName === null
        ? null
        : keyring.seal(medium.fileName, medium.portalId, PURPOSE, medium.id),
    phoneNumberId: medium.phoneNumberId,
    expiresAt,
    createdAt: medium.now,
  });
  return expiresAt;
}

/** The file name of the portal's uploaded medium `id`, opened; undefined when it has none. */
export async function uploadedFileName(
  db: Database,
  keyring: ContentKeyring,
  portalId: number,
  id: string,
): Promise<string | undefined> {
  const [row] = await db
    .select({ fileName: media.fileName })
    .from(media)
    .where(and(eq(media.portalId, portalId), eq(media.id, id), eq(media.direction, 'outbound')));
  return row?.fileName ? keyring.open(row.fileName, portalId, PURPOSE, id) : undefined;
}
