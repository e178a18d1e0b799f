/**
 * The checks of a send's kind that its schema cannot say (send-kinds-schemas.ts says the rest):
 * exactly one of `mediaId` and `link`; a `mediaId` that is the portal's, of the right kind, from
 * the sender number, and not expired; unique reply ids and titles, unique row ids; ten rows in all, titled
 * sections when there are several; a reaction's or a quote's message in this conversation.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
 * @see docs/messaging.md "Sending"
 */
import { AppError } from '../../platform/errors.ts';
import { findSendableMedium } from '../media/outbound-media.ts';
import type { KindObject, OutboundContent, SendKind } from '../store/message-content.ts';
import { findTargetMessage, type ConversationKey } from '../store/message-targets.ts';
import type { Db } from '../store/messages-repository.ts';
import { INTERACTIVE, type SendMessageBody } from '../store/send-kinds-schemas.ts';

/** The media kinds: their object names a medium by `mediaId` or `link`. */
export const MEDIA_KINDS = ['image', 'video', 'audio', 'document', 'sticker'] as const;
type MediaKind = (typeof MEDIA_KINDS)[number];

const invalid = (field: string, message: string) =>
  new AppError('invalid_request', `\`${field}\` ${message}.`, {
    details: [{ field: `body.${field}`, message }],
  });

interface Checking {
  db: Db;
  conversation: ConversationKey;
}

/** A medium reference: one of `mediaId` and `link`; the id the portal's, of `kind`, sendable. */
async function checkMedium(
  c: Checking,
  field: string,
  kind: MediaKind,
  ref: { mediaId?: string; link?: string },
): Promise<void> {
  if ((ref.mediaId === undefined) === (ref.link === undefined))
    throw invalid(field, 'must give exactly one of `mediaId` and `link`');
  if (ref.mediaId === undefined) return;
  const medium = await findSendableMedium(c.db, c.conversation.portalId, ref.mediaId);
  if (!medium)
    throw new AppError(
      'not_found',
      `No medium with the id given in \`${field}.mediaId\` (unknown, or expired: upload it again).`,
    );
  if (medium.kind !== kind)
    throw invalid(`${field}.mediaId`, `is a medium of kind ${medium.kind}, not ${kind}`);
  if (medium.phoneNumberId !== c.conversation.phoneNumberId)
    throw invalid(`${field}.mediaId`, 'belongs to another sender number (`from`)');
}

/** Ids (or titles) that must be unique within the message. */
function checkUnique(field: string, values: readonly string[], what = 'an id'): void {
  if (new Set(values).size !== values.length) throw invalid(field, `must not repeat ${what}`);
}

async function checkInteractive(c: Checking, o: KindObject<'interactive'>): Promise<void> {
  const header = o.header;
  if (header && header.type !== 'text') {
    const ref = (header as unknown as Record<string, { mediaId?: string; link?: string }>)[
      header.type
    ]!;
    await checkMedium(c, `interactive.header.${header.type}`, header.type, ref);
  }
  if (o.type === 'button') {
    const replies = o.action.buttons.map((b) => b.reply);
    checkUnique(
      'interactive.action.buttons',
      replies.map((r) => r.id),
    );
    // The person tells the buttons apart by their titles: the Cloud API refuses repeats.
    checkUnique(
      'interactive.action.buttons',
      replies.map((r) => r.title),
      'a title',
    );
  } else if (o.type === 'list') {
    const rows = o.action.sections.flatMap((s) => s.rows);
    if (rows.length > INTERACTIVE.rows)
      throw invalid(
        'interactive.action.sections',
        `must have at most ${INTERACTIVE.rows} rows in all`,
      );
    checkUnique(
      'interactive.action.sections',
      rows.map((r) => r.id),
    );
    const untitled = o.action.sections.findIndex((s) => s.title === undefined);
    if (o.action.sections.length > 1 && untitled >= 0)
      throw invalid(
        `interactive.action.sections.${untitled}.title`,
        'is required when there are several sections',
      );
  }
}

/** The message `field` names, in this conversation and not failed before it was sent. */
async function checkTarget(c: Checking, field: string, id: string): Promise<void> {
  const target = await findTargetMessage(c.db, c.conversation, id);
  if (!target || target.state === 'failed')
    throw new AppError(
      'not_found',
      `No message with the id given in \`${field}\` in this conversation (the recipient and ` +
        'the sender number), or it was never sent.',
    );
}

/**
 * Check a free-form send's kind against storage, in `conversation`.
 *
 * @returns its content to store: the kind's object as accepted, and `context`.
 * @throws AppError `invalid_request` (400, naming the field) or `not_found` (404: an unknown or
 *   expired medium, a reaction's or quote's message not in this conversation).
 */
export async function checkKind(
  db: Db,
  conversation: ConversationKey,
  input: Exclude<SendMessageBody, { type: 'template' }>,
): Promise<OutboundContent> {
  const c: Checking = { db, conversation };
  const type: Exclude<SendKind, 'template'> = input.type;
  const object = (input as Record<string, unknown>)[type];
  if ((MEDIA_KINDS as readonly string[]).includes(type))
    await checkMedium(c, type, type as MediaKind, object as { mediaId?: string; link?: string });
  if (input.type === 'interactive') await checkInteractive(c, input.interactive);
  if (input.type === 'reaction')
    await checkTarget(c, 'reaction.messageId', input.reaction.messageId);
  if (input.context) await checkTarget(c, 'context.messageId', input.context.messageId);
  return {
    [type]: object,
    ...(input.context && { context: { messageId: input.context.messageId } }),
  };
}
