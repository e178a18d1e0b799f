/**
 * The provider's inbound messages, stored (partner/'s `ProviderWebhookSink.inboundMessages`):
 * per webhook batch and business number, in one transaction, each new message stored once per
 * (portal, wamid) with its content sealed (message-content.ts), its sender recorded as a contact
 * (by phone, else by business-scoped user id: inbound-people.ts),
 * the service window opened, the conversation moved on, a medium row for a media message, and
 * its reply or reaction linked to our message of that wamid; then, in the same transaction, each
 * new message's events: `inbound.received` (or `inbound.reacted`) with the API view, and
 * `inbound.text` for a text (where the consent module reads keywords). A replay stores nothing and emits nothing.
 *
 * A batch that fails is tried again one message per transaction, so one bad message does not
 * lose the others; a message that fails alone is logged (its wamid, never its content) and left
 * for the provider's retry only when nothing of the batch could be stored.
 *
 * @see docs/messaging.md "Inbound messages"
 */
import { notifyConversationsOf } from '../store/conversation-changes.ts';
import { normalisePhone } from '../../contacts/phone.ts';
import type { Database } from '../../db/client.ts';
import { randomBase62 } from '../../platform/crypto.ts';
import type { Logger } from '../../platform/logger.ts';
import type { InboundMessageEvent } from '../../partner/cloud-api/provider-webhook-events.ts';
import {
  sealContent,
  type ContentKeyring,
  type StoredInboundContent,
} from '../store/message-content.ts';
import type { Tx } from '../store/messages-repository.ts';
import type { MessagingEvents } from '../events/messaging-events.ts';
import type { InboundMessage } from '../store/inbound-schemas.ts';
import {
  ingest,
  messagesByWamid,
  type IngestPerson,
  type IngestRow,
} from './inbound-statements.ts';
import { inboundMessageView } from '../store/message-view.ts';
import { recordInboundPeople, type InboundPerson } from './inbound-people.ts';

/** Work left for after the batch's transaction committed (`inbound.text`'s `afterCommit`). */
type AfterCommit = () => Promise<void>;

interface InboundIngestionDeps {
  db: Database;
  keyring: ContentKeyring;
  logger: Logger;
  /** Where new messages are announced (none in tests of messaging alone). */
  events?: MessagingEvents | undefined;
}

/** A message ready to store: its row, its content in clear (for the steps), its sender. */
interface Prepared {
  /** The row; its `contact_id` is set once the batch's senders are recorded. */
  row: IngestRow;
  person: InboundPerson;
  content: StoredInboundContent;
  event: InboundMessageEvent;
}

const newInboundMessageId = () => `msg_${randomBase62(16)}`;
const newMediaId = () => `med_${randomBase62(16)}`;
const newConversationId = () => `cnv_${randomBase62(16)}`;

/** The ingestion of inbound batches: `store(portalId, phoneNumberId, events)`. */
export function createInboundIngestion(deps: InboundIngestionDeps) {
  const { db, keyring } = deps;
  const log = deps.logger.child({ component: 'messaging-inbound' });

  /** Store `batch` in one transaction; @returns how many messages were new. */
  async function storeBatch(portalId: number, phoneNumberId: string, batch: Prepared[]) {
    const later: AfterCommit[] = [];
    const stored = await db.transaction(async (tx) => {
      const named = [...new Set(batch.flatMap((p) => p.row.ctx_wamid ?? []))];
      const known = await messagesByWamid(tx, portalId, named);
      const inBatch = new Map(batch.map((p) => [p.row.wamid, p.row.id]));
      for (const p of batch) {
        const w = p.row.ctx_wamid;
        if (w !== null) p.row.ctx_message_id = known.get(w) ?? inBatch.get(w) ?? null;
      }
      const { inserted, reopened } = await ingest(
        tx,
        portalId,
        phoneNumberId,
        batch.map((p) => p.row),
        await people(tx, portalId, batch),
      );
      // Open inboxes on every instance hear of the conversations (ids only) at commit.
      const senders = [...new Set(inserted.map((r) => r.contactId))];
      await notifyConversationsOf(
        tx,
        portalId,
        senders.map((contactId) => ({ contactId, phoneNumberId })),
      );
      // In the webhook's order: a reply's event before its reaction's.
      const contactOf = new Map(inserted.map((r) => [r.id, r.contactId]));
      const views: InboundMessage[] = [];
      for (const p of batch) {
        const contactId = contactOf.get(p.row.id);
        if (contactId !== undefined)
          views.push(await afterInsert(deps, tx, { portalId, phoneNumberId, later }, p, contactId));
      }
      const bus = deps.events;
      if (bus && views.length > 0) {
        const reactions = views.filter((v) => v.type === 'reaction');
        await bus.emitSerial('inbound.received', {
          tx,
          portalId,
          messages: views.filter((v) => v.type !== 'reaction'),
        });
        if (reactions.length > 0)
          await bus.emitSerial('inbound.reacted', { tx, portalId, messages: reactions });
      }
      // A new message reopened a resolved or snoozed conversation: Portico changed its status.
      const changedAt = new Date().toISOString();
      for (const r of reopened)
        await bus?.emitSerial('conversation.work_changed', {
          tx,
          portalId,
          change: {
            conversationId: r.conversationId,
            contactId: r.contactId,
            phoneNumberId,
            status: { from: r.from, to: 'open', snoozedUntil: null },
            by: { type: 'system' },
            changedAt,
          },
        });
      return inserted.length;
    });
    for (const run of later) await run();
    return stored;
  }

  return {
    /**
     * Store a batch of the provider's inbound messages to `phoneNumberId` (see the module).
     *
     * @returns how many were new.
     * @throws the storage's error when not one message of the batch could be stored.
     */
    async store(
      portalId: number,
      phoneNumberId: string,
      events: readonly InboundMessageEvent[],
    ): Promise<number> {
      const seen = new Set<string>();
      const batch: Prepared[] = [];
      for (const event of events) {
        if (seen.has(event.wamid)) continue;
        seen.add(event.wamid);
        batch.push(prepare(keyring, log, portalId, event));
      }
      if (batch.length === 0) return 0;
      try {
        return await storeBatch(portalId, phoneNumberId, batch);
      } catch (err) {
        if (batch.length === 1) throw err;
        log.warn({ portalId, messages: batch.length }, 'inbound batch failed: one at a time');
      }
      let stored = 0;
      let firstError: unknown = null;
      let failed = 0;
      for (const p of batch) {
        try {
          stored += await storeBatch(portalId, phoneNumberId, [p]);
        } catch (err) {
          failed++;
          firstError ??= err;
          log.error(
            { portalId, wamid: p.row.wamid, error: err instanceof Error ? err.name : typeof err },
            'inbound message could not be stored',
          );
        }
      }
      if (failed === batch.length) throw firstError;
      return stored;
    },
  };
}

/** A message ready to store: its ids, its content sealed, its links still to resolve. */
function prepare(
  keyring: ContentKeyring,
  log: Logger,
  portalId: number,
  event: InboundMessageEvent,
): Prepared {
  // The provider's `wa_id` is the person's WhatsApp address even when the phone library does
  // not know its numbering plan (a new range, a country's late change): kept as is. A person
  // who uses a username may come without it, named by their business-scoped user id alone.
  let phone: string | null = null;
  if (event.from !== undefined) {
    const parsed = normalisePhone(`+${event.from}`);
    if (!parsed.ok)
      log.info({ portalId }, 'inbound message from a phone the library calls invalid');
    phone = parsed.ok ? parsed.e164 : `+${event.from}`;
  }
  const person: InboundPerson = {
    phone,
    waUserId: event.fromUserId ?? null,
    parentWaUserId: event.fromParentUserId ?? null,
    username: event.username ?? null,
    profileName: event.profileName ?? null,
    at: event.timestamp.toISOString(),
  };
  const id = newInboundMessageId();
  // The context's personal part (the wamid it names is a column).
  const { providerMessageId: _wamid, ...personal } = event.context ?? {};
  const content: StoredInboundContent = {
    ...event.content,
    ...(Object.keys(personal).length > 0 && { context: personal }),
    ...(event.referral && { referral: event.referral }),
  };
  const medium = 'media' in event.content ? event.content.media : null;
  const ctx =
    event.content.type === 'reaction'
      ? event.content.reaction.providerMessageId
      : (event.context?.providerMessageId ?? null);
  return {
    event,
    content,
    person,
    row: {
      id,
      wamid: event.wamid,
      wa_id: (phone ?? person.waUserId)!,
      contact_id: '',
      type: event.type,
      content: sealContent(keyring, portalId, id, content),
      media_id: medium ? newMediaId() : null,
      provider_media_id: medium?.providerMediaId ?? null,
      mime_type: medium?.mimeType ?? null,
      sha256: medium?.sha256 ?? null,
      ctx_wamid: ctx,
      ctx_message_id: null,
      received_at: event.timestamp.toISOString(),
    },
  };
}

/** A new message's steps: its text's, then its event. */
async function afterInsert(
  deps: Pick<InboundIngestionDeps, 'events'>,
  tx: Tx,
  {
    portalId,
    phoneNumberId,
    later,
  }: { portalId: number; phoneNumberId: string; later: AfterCommit[] },
  p: Prepared,
  contactId: string,
): Promise<InboundMessage> {
  const { row, content } = p;
  const receivedAt = new Date(row.received_at);
  if (content.type === 'text')
    await deps.events?.emitSerial('inbound.text', {
      tx,
      text: {
        portalId,
        contactId,
        messageId: row.id,
        body: content.text.body,
        phoneNumberId,
        receivedAt,
      },
      afterCommit: (work) => later.push(work),
    });
  const view = inboundMessageView(
    {
      id: row.id,
      waId: row.wa_id,
      contactId,
      phoneNumberId,
      providerMessageId: row.wamid,
      type: row.type,
      contextProviderMessageId: row.ctx_wamid,
      contextMessageId: row.ctx_message_id,
      createdAt: receivedAt,
      readAt: null,
    },
    content,
    row.media_id === null
      ? null
      : { id: row.media_id, mimeType: row.mime_type!, sha256: row.sha256, fileSize: null },
  );
  // What the provider said of the sender with this message (`message.received` carries it).
  const { waUserId, username } = p.person;
  return {
    ...view,
    ...(waUserId !== null && { waUserId }),
    ...(username !== null && { username }),
  };
}

/**
 * Each sender of the batch once (messages naming them by phone, by BSUID or both are one
 * person), recorded as a contact (inbound-people.ts); each row gets its contact.
 *
 * @returns each contact once, with a new conversation's id.
 */
async function people(tx: Tx, portalId: number, batch: readonly Prepared[]) {
  const senders: InboundPerson[] = [];
  const byKey = new Map<string, InboundPerson>();
  const of = batch.map(({ person: p }) => {
    const same =
      (p.phone !== null ? byKey.get(`p:${p.phone}`) : undefined) ??
      (p.waUserId !== null ? byKey.get(`u:${p.waUserId}`) : undefined);
    const s = same ?? { ...p };
    if (!same) senders.push(s);
    s.phone ??= p.phone;
    s.waUserId ??= p.waUserId;
    s.parentWaUserId ??= p.parentWaUserId;
    if (p.at >= s.at) {
      s.at = p.at;
      s.username = p.username ?? s.username;
      s.profileName = p.profileName ?? s.profileName;
    }
    if (s.phone !== null) byKey.set(`p:${s.phone}`, s);
    if (s.waUserId !== null) byKey.set(`u:${s.waUserId}`, s);
    return s;
  });
  const contactIds = await recordInboundPeople(tx, portalId, senders);
  const contactOf = new Map(senders.map((s, i) => [s, contactIds[i]!]));
  batch.forEach((p, i) => (p.row.contact_id = contactOf.get(of[i]!)!));
  return [...new Set(contactIds)].map((contact_id): IngestPerson => ({
    contact_id,
    conversation_id: newConversationId(),
  }));
}
