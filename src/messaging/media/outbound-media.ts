/**
 * Media a portal may send (uploaded through `POST /messaging/media`): the lookup the send
 * checks and the delivery worker use to map our `med_…` id to the provider's media id.
 *
 * This branch has no uploads yet: every id is unknown. The uploads' own version (the `media`
 * table) replaces this file with the same signature.
 *
 * @see docs/messaging.md "Media"
 */
import type { Db } from '../messages/messages-repository.ts';

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
  _db: Db,
  _portalId: number,
  _id: string,
): Promise<SendableMedium | null> {
  return null;
}
