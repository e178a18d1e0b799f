/**
 * Messages in both directions through one API: `GET /messaging/messages` (one keyset order over
 * both directions, filters `direction`, `contactId`, `phoneNumberId`, and the outbound filters
 * `status`, `to`) and `GET /messaging/messages/{id}` for an id of either direction; the inbox's
 * thread reads the same pages. Rows become the API's messages through the one mapper
 * (`messageView`). Content is opened here, per message; a content that cannot be opened (a key
 * gone) reads as erased and is logged by id only; a message that does not fit its schema is
 * shown without its content, logged by id only (platform/row-fit.ts).
 *
 * @see docs/messaging.md "Conversations"
 */
import { and, eq, sql } from 'drizzle-orm';
import { media } from '../../db/schema/conversations.ts';
import type { Database } from '../../db/client.ts';
import type { PagePosition } from '../../db/keyset-page.ts';
import { AppError } from '../../platform/errors.ts';
import type { Logger } from '../../platform/logger.ts';
import type { SealedValue } from '../../platform/keyring.ts';
import { fittingView, rowCheck, type Misfit } from '../../platform/row-fit.ts';
import { InboundMessageSchema } from '../store/inbound-schemas.ts';
import {
  openContent,
  type ContentKeyring,
  type OutboundContent,
  type StoredInboundContent,
} from '../store/message-content.ts';
import {
  messageCursor,
  messageView,
  outboundContentOf,
  type AnyMessage,
  type MediaMetadata,
} from '../store/message-view.ts';
import {
  listMessageRows,
  type MessageListFilter,
  type MessageRow,
  type StoredMessageRow,
} from '../store/messages-repository.ts';
import { MessageSchema, type ListMessagesQuery } from '../store/messages-schemas.ts';
import { findStoredMessage } from './message-thread-repository.ts';

export type { AnyMessage } from '../store/message-view.ts';

interface MessageListDeps {
  db: Database;
  keyring: ContentKeyring;
  logger: Pick<Logger, 'warn'>;
}

/** Open a content, or null (logged by id) when it cannot be opened. */
export function openOrNull<T extends OutboundContent | StoredInboundContent>(
  deps: Pick<MessageListDeps, 'keyring' | 'logger'>,
  portalId: number,
  messageId: string,
  sealed: SealedValue | null,
): T | null {
  try {
    return openContent<T>(deps.keyring, portalId, messageId, sealed);
  } catch {
    deps.logger.warn({ portalId, messageId }, 'message content could not be opened');
    return null;
  }
}

const fitsMessage = rowCheck(MessageSchema);
const fitsInbound = rowCheck(InboundMessageSchema);

/**
 * A row and its opened content as the API shows it (`messageView`), checked against its
 * direction's schema (platform/row-fit.ts): without its content when that does not fit (logged
 * by id), null when even that does not.
 */
function fittedMessage(
  logger: Pick<Logger, 'warn'>,
  row: StoredMessageRow,
  content: OutboundContent | StoredInboundContent | null,
  medium: MediaMetadata | null = null,
): AnyMessage | null {
  const fits: (view: unknown) => view is AnyMessage =
    row.direction === 'outbound' ? fitsMessage : fitsInbound;
  return fittingView(
    fits,
    () => messageView(row, content, medium),
    () => messageView(row, null, null),
    (outcome: Misfit, err?: unknown) =>
      logger.warn(
        {
          portalId: row.portalId,
          messageId: row.id,
          outcome,
          ...(err instanceof Error && { errorType: err.name }),
        },
        'a stored message does not fit its schema',
      ),
  );
}

/** A row's opened content: outbound with its older plaintext columns; null when gone. */
function contentOf(
  deps: Pick<MessageListDeps, 'keyring' | 'logger'>,
  row: StoredMessageRow,
): OutboundContent | StoredInboundContent | null {
  if (row.direction === 'inbound')
    return openOrNull<StoredInboundContent>(deps, row.portalId, row.id, row.content);
  try {
    return outboundContentOf(deps.keyring, row as MessageRow);
  } catch {
    deps.logger.warn({ portalId: row.portalId, messageId: row.id }, 'content could not be opened');
    return null;
  }
}

async function mediaOf(
  db: Database,
  portalId: number,
  ids: readonly string[],
): Promise<Map<string, MediaMetadata>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({
      id: media.id,
      mimeType: media.mimeType,
      sha256: media.sha256,
      fileSize: media.fileSize,
    })
    .from(media)
    .where(and(eq(media.portalId, portalId), sql`${media.id} in ${ids}`));
  return new Map(rows.map((r) => [r.id, r]));
}

/** Rows of either direction as the API shows them, in their order (media read in one query). */
async function messageViews(
  deps: MessageListDeps,
  portalId: number,
  rows: readonly StoredMessageRow[],
): Promise<AnyMessage[]> {
  const medium = await mediaOf(
    deps.db,
    portalId,
    rows.flatMap((r) => (r.mediaId === null ? [] : [r.mediaId])),
  );
  return rows.flatMap((row) => {
    const view = fittedMessage(
      deps.logger,
      row,
      contentOf(deps, row),
      row.mediaId === null ? null : (medium.get(row.mediaId) ?? null),
    );
    return view === null ? [] : [view];
  });
}

/** One page of messages as the API shows them, newest first, and the next page's cursor. */
export async function messagePage(
  deps: MessageListDeps,
  portalId: number,
  page: { limit: number; after?: PagePosition | undefined; filter: MessageListFilter },
): Promise<{ items: AnyMessage[]; nextCursor: string | null }> {
  const { rows, hasMore } = await listMessageRows(deps.db, portalId, page);
  const last = rows.at(-1);
  return {
    items: await messageViews(deps, portalId, rows),
    nextCursor: hasMore && last ? messageCursor.encodeCursor(last) : null,
  };
}

/** One page of both directions, newest first. @throws AppError `invalid_request` (cursor). */
export async function listBothDirections(
  deps: MessageListDeps,
  portalId: number,
  query: ListMessagesQuery,
): Promise<{ items: AnyMessage[]; nextCursor: string | null }> {
  return messagePage(deps, portalId, {
    limit: query.limit,
    after: messageCursor.after(query.cursor),
    filter: {
      direction: query.direction,
      contactId: query.contactId,
      phoneNumberId: query.phoneNumberId,
      status: query.status,
      to: query.to,
      since: query.since === undefined ? undefined : new Date(query.since),
      until: query.until === undefined ? undefined : new Date(query.until),
    },
  });
}

/** A message of either direction. @throws AppError `not_found` (any other id). */
export async function findAnyMessage(
  deps: MessageListDeps,
  portalId: number,
  id: string,
): Promise<AnyMessage> {
  const row = await findStoredMessage(deps.db, portalId, id);
  // A row that cannot be shown at all (logged) is answered as none.
  const [view] = row ? await messageViews(deps, portalId, [row]) : [];
  if (!view) throw new AppError('not_found', 'No message with this id.');
  return view;
}
