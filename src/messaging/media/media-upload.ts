/**
 * Uploading a business's medium: a file already received and checked (media-intake.ts) goes to
 * the provider through the portal's number (`POST /{phone-number-id}/media`, streamed from the
 * temporary file, inside partner/'s outbound-call path), and the provider's media id is recorded
 * under our id (`med_…`), sendable for 30 days (outbound-media.ts).
 *
 * @see docs/messaging.md "Media"
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#upload-media
 */
import type { Database } from '../../db/client.ts';
import type { ContentKeyring } from '../store/message-content.ts';
import { senderOf } from '../provider/sender-number.ts';
import type { ProviderAdapter } from '../provider/provider-adapter.ts';
import type { ReceivedMedium } from './media-intake.ts';
import { insertOutboundMedium, newMediumId } from './outbound-media.ts';

/** What the API answers for an upload. */
export interface UploadedMedium {
  /** Our id, `med_…`: what a send's `mediaId` names. */
  id: string;
  mimeType: string;
  /** Bytes. */
  size: number;
  /** When the provider forgets it (30 days after the upload). */
  expiresAt: Date;
}

export interface MediaUploadDeps {
  db: Database;
  provider: Pick<ProviderAdapter, 'numbers' | 'uploadMedium'>;
  keyring: ContentKeyring;
}

/** Longest file name kept (characters); a longer one is cut. */
const MAX_FILE_NAME = 240;

/**
 * Upload `received` for the portal through its number `phoneNumberId` (may be left out when the
 * account has one number) and record it.
 *
 * @param fileName the client's name for the file (kept sealed; sent to the provider as the
 *   part's name).
 * @throws AppError `invalid_request` (`phoneNumberId` missing with several numbers, or not one
 *   of the account's), `not_connected`, `provider_error`, `provider_timeout`.
 */
export async function uploadMedium(
  deps: MediaUploadDeps,
  portalId: number,
  received: ReceivedMedium,
  input: { fileName: string; phoneNumberId: string | undefined },
): Promise<UploadedMedium> {
  // Refuses a portal with no active connection (409 `not_connected`) before reading numbers.
  const sender = senderOf(
    await deps.provider.numbers(portalId),
    input.phoneNumberId,
    'phoneNumberId',
  );
  const fileName = [...input.fileName].slice(0, MAX_FILE_NAME).join('');
  // Before the call: the provider's 30 days start at its end, so the recorded expiry is early.
  const now = new Date();
  const uploaded = await deps.provider.uploadMedium(portalId, sender.id, {
    path: received.path,
    mimeType: received.mimeType,
    fileName: fileName || 'file',
    size: received.size,
  });
  const id = newMediumId();
  const expiresAt = await insertOutboundMedium(deps.db, deps.keyring, {
    id,
    portalId,
    providerMediaId: uploaded.id,
    mimeType: received.mimeType,
    kind: received.kind,
    size: received.size,
    fileName: fileName === '' ? null : fileName,
    phoneNumberId: sender.id,
    now,
  });
  return { id, mimeType: received.mimeType, size: received.size, expiresAt };
}
