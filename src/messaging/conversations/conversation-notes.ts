/**
 * Private notes in a conversation's thread: written and read by the portal's members only, never
 * sent to the person, never in a tenant webhook but their own `conversation.note_added`. The body
 * is sealed like message content (keyring purpose `conversation-note`, the note id bound as
 * associated data; db/sealed-columns.ts, so `keys rotate` re-seals it) and goes with its
 * conversation, and so with the contact's erasure. Listed newest first, a keyset page at a time.
 *
 * Invariants: every statement filters by portal id; a body is never logged (ids only).
 *
 * @see docs/messaging.md "Working a conversation"
 * @see docs/decisions/0064-conversations-worked-by-a-team.md
 */
import { and, eq } from 'drizzle-orm';
import { memberId, memberIdOrNull } from '../../accounts/member-id.ts';
import { keysetCursor } from '../../api-kit/keyset-cursor.ts';
import type { Database } from '../../db/client.ts';
import { readKeysetPage } from '../../db/keyset-page.ts';
import { conversationNotes, conversations } from '../../db/schema/conversations.ts';
import { randomBase62 } from '../../platform/crypto.ts';
import { AppError } from '../../platform/errors.ts';
import type { Keyring } from '../../platform/keyring.ts';
import type { Logger } from '../../platform/logger.ts';
import type { MessagingEvents } from '../events/messaging-events.ts';
import { notifyConversationChanges } from '../store/conversation-changes.ts';
import type { MemberPrincipal } from './conversation-work.ts';
import type { ListNotesQuery, Note } from './conversations-schemas.ts';

const PURPOSE = 'conversation-note';
const noteCursor = keysetCursor(/^nte_[0-9A-Za-z]{1,60}$/);

/** Shown for a note whose body cannot be opened (a key the keyring lacks, a damaged row). */
export const UNREADABLE_NOTE = '(this note cannot be read)';

interface NotesDeps {
  db: Database;
  keyring: Pick<Keyring, 'seal' | 'open'>;
  logger: Pick<Logger, 'warn'>;
  events?: MessagingEvents | undefined;
  now: () => Date;
}

const notFound = () => new AppError('not_found', 'No conversation with this id.');

/** The notes of conversations; see the module comment. */
export function createConversationNotes(deps: NotesDeps) {
  const { db, keyring } = deps;

  function open(portalId: number, id: string, sealed: Parameters<Keyring['open']>[0]): string {
    try {
      return keyring.open(sealed, portalId, PURPOSE, id);
    } catch {
      deps.logger.warn({ portalId, noteId: id }, 'a conversation note could not be opened');
      return UNREADABLE_NOTE;
    }
  }

  return {
    /**
     * Add member `principal.userId`'s note `body` (validated by the route: 1–4096 characters)
     * to conversation `conversationId`, announced as `conversation.note_added` and to the open
     * inboxes, in one transaction.
     *
     * @throws AppError `not_found` (unknown conversation, another portal's).
     */
    async add(principal: MemberPrincipal, conversationId: string, body: string): Promise<Note> {
      const createdAt = deps.now();
      const id = `nte_${randomBase62(16)}`;
      return db.transaction(async (tx) => {
        const [c] = await tx
          .select({ contactId: conversations.contactId })
          .from(conversations)
          .where(
            and(
              eq(conversations.portalId, principal.portalId),
              eq(conversations.id, conversationId),
            ),
          );
        if (!c) throw notFound();
        await tx.insert(conversationNotes).values({
          id,
          portalId: principal.portalId,
          conversationId,
          authorId: principal.userId,
          body: keyring.seal(body, principal.portalId, PURPOSE, id),
          createdAt,
        });
        const note: Note = {
          id,
          conversationId,
          authorId: memberId(principal.userId),
          body,
          createdAt: createdAt.toISOString(),
        };
        await deps.events?.emitSerial('conversation.note_added', {
          tx,
          portalId: principal.portalId,
          note: {
            conversationId,
            contactId: c.contactId,
            noteId: id,
            authorId: note.authorId!,
            body,
            createdAt: note.createdAt,
          },
        });
        await notifyConversationChanges(tx, [{ portalId: principal.portalId, conversationId }]);
        return note;
      });
    },

    /**
     * A page of a conversation's notes, newest first.
     *
     * @throws AppError `not_found` (unknown conversation, another portal's), `invalid_request`
     *   (a cursor this list did not give).
     */
    async list(
      principal: Pick<MemberPrincipal, 'portalId'>,
      conversationId: string,
      query: ListNotesQuery,
    ): Promise<{ items: Note[]; nextCursor: string | null }> {
      const { portalId } = principal;
      const after = noteCursor.after(query.cursor);
      const [c] = await db
        .select({ id: conversations.id })
        .from(conversations)
        .where(and(eq(conversations.portalId, portalId), eq(conversations.id, conversationId)));
      if (!c) throw notFound();
      const page = await readKeysetPage(
        { createdAt: conversationNotes.createdAt, id: conversationNotes.id },
        [
          eq(conversationNotes.portalId, portalId),
          eq(conversationNotes.conversationId, conversationId),
        ],
        { limit: query.limit, after },
        (where, orderBy, limit) =>
          db
            .select()
            .from(conversationNotes)
            .where(where)
            .orderBy(...orderBy)
            .limit(limit),
      );
      return noteCursor.page(page, (row) => ({
        id: row.id,
        conversationId: row.conversationId,
        authorId: memberIdOrNull(row.authorId),
        body: open(portalId, row.id, row.body),
        createdAt: row.createdAt.toISOString(),
      }));
    },
  };
}

export type ConversationNotes = ReturnType<typeof createConversationNotes>;
