/**
 * Messages in both directions through one API: `GET /messaging/messages` (one keyset order over
 * outbound and inbound, filters `direction`, `contactId`, `phoneNumberId`, and the outbound
 * filters `status`, `to`) and `GET /messaging/messages/{id}` for an id of either direction.
 * Content is opened here, per message; a content that cannot be opened (a key gone) reads as
 * erased and is logged by id only; a message that does not fit its schema is shown without its
 * content, logged by id only (platform/row-fit.ts).
 *
 * @see docs/messaging.md "Conversations"
 */
import { and, eq, sql } from 'drizzle-orm';
import { inboundMessages, media } from '../../db/schema/conversations.ts';
import type { Database } from '../../db/client.ts';
import { AppError } from '../../platform/errors.ts';
import type { Logger } from '../../platform/logger.ts';
import type { SealedValue } from '../../platform/keyring.ts';
import { fittingView, rowCheck, type Misfit } from '../../platform/row-fit.ts';
import {
  inboundMessageView,
  type InboundMessageRow,
  type MediaMetadata,
} from '../inbound/inbound-view.ts';
import { InboundMessageSchema, type InboundMessage } from '../inbound/inbound-schemas.ts';
import {
  openContent,
  type ContentKeyring,
  type OutboundContent,
  type StoredInboundContent,
} from '../messages/message-content.ts';
import { messageCursor, outboundContentOf, toMessage } from '../messages/message-view.ts';
import { findMessage, type MessageRow } from '../messages/messages-repository.ts';
import {
  MessageSchema,
  type ListMessagesQuery,
  type Message,
} from '../messages/messages-schemas.ts';
import { listMessageKeys, messagesByIds } from './message-thread-repository.ts';

/** A message of either direction as the API shows it. */
export type AnyMessage = Message | InboundMessage;

export interface MessageListDeps {
  db: Database;
  keyring: ContentKeyring;
  logger: Logger;
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

/** The log line of a stored message that does not fit its schema (ids only). */
function misfitLog(logger: Pick<Logger, 'warn'>, portalId: number, messageId: string) {
  return (outcome: Misfit, err?: unknown) =>
    logger.warn(
      { portalId, messageId, outcome, ...(err instanceof Error && { errorType: err.name }) },
      'a stored message does not fit its schema',
    );
}

/**
 * An outbound row and its opened content as the API shows it, checked against its schema
 * (platform/row-fit.ts): without its content when that does not fit (logged), null when even
 * that does not.
 */
export function fittedOutbound(
  logger: Pick<Logger, 'warn'>,
  row: MessageRow,
  content: OutboundContent | null,
): Message | null {
  return fittingView(
    fitsMessage,
    () => toMessage(row, content),
    () => toMessage(row, null),
    misfitLog(logger, row.portalId, row.id),
  );
}

/** An inbound row as the API shows it, checked as {@link fittedOutbound} checks. */
export function fittedInbound(
  logger: Pick<Logger, 'warn'>,
  row: InboundMessageRow,
  content: StoredInboundContent | null,
  medium: MediaMetadata | null,
): InboundMessage | null {
  return fittingView(
    fitsInbound,
    () => inboundMessageView(row, content, medium),
    () => inboundMessageView(row, null, null),
    misfitLog(logger, row.portalId, row.id),
  );
}

/** An outbound row as the API shows it, its text and parameters from the sealed content. */
export function outboundView(deps: MessageListDeps, row: MessageRow): Message | null {
  let content: OutboundContent | null = null;
  try {
    content = outboundContentOf(deps.keyring, row);
  } catch {
    deps.logger.warn({ portalId: row.portalId, messageId: row.id }, 'content could not be opened');
  }
  return fittedOutbound(deps.logger, row, content);
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

/** Inbound rows as the API shows them (their media read in one query). */
export async function inboundViews(
  deps: MessageListDeps,
  portalId: number,
  rows: readonly (typeof inboundMessages.$inferSelect)[],
): Promise<InboundMessage[]> {
  const medium = await mediaOf(
    deps.db,
    portalId,
    rows.flatMap((r) => (r.mediaId === null ? [] : [r.mediaId])),
  );
  return rows.flatMap((row) => {
    const view = fittedInbound(
      deps.logger,
      row,
      openOrNull<StoredInboundContent>(deps, portalId, row.id, row.content),
      row.mediaId === null ? null : (medium.get(row.mediaId) ?? null),
    );
    return view === null ? [] : [view];
  });
}

/** One page of both directions, newest first. @throws AppError `invalid_request` (cursor). */
export async function listBothDirections(
  deps: MessageListDeps,
  portalId: number,
  query: ListMessagesQuery,
): Promise<{ items: AnyMessage[]; nextCursor: string | null }> {
  const page = await listMessageKeys(deps.db, portalId, {
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
  const rows = await messagesByIds(deps.db, portalId, page.rows);
  const inbound = new Map(
    (await inboundViews(deps, portalId, [...rows.inbound.values()])).map((m) => [m.id, m]),
  );
  const items: AnyMessage[] = [];
  for (const key of page.rows) {
    if (key.direction === 'inbound') {
      const view = inbound.get(key.id);
      if (view) items.push(view);
    } else {
      const row = rows.outbound.get(key.id);
      const view = row && outboundView(deps, row);
      if (view) items.push(view);
    }
  }
  const last = page.rows.at(-1);
  return {
    items,
    nextCursor: page.hasMore && last ? messageCursor.encodeCursor(last) : null,
  };
}

/** A message of either direction. @throws AppError `not_found` (any other id). */
export async function findAnyMessage(
  deps: MessageListDeps,
  portalId: number,
  id: string,
): Promise<AnyMessage> {
  const outbound = await findMessage(deps.db, portalId, id);
  // A row that cannot be shown at all (logged) is answered as none.
  const gone = () => new AppError('not_found', 'No message with this id.');
  if (outbound) {
    const view = outboundView(deps, outbound);
    if (view === null) throw gone();
    return view;
  }
  const [row] = await deps.db
    .select()
    .from(inboundMessages)
    .where(and(eq(inboundMessages.portalId, portalId), eq(inboundMessages.id, id)));
  if (!row) throw gone();
  const [view] = await inboundViews(deps, portalId, [row]);
  if (!view) throw gone();
  return view;
}
