/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * Private notes on `/inbox/{conversationId}`, on the page kit: the thread's "Private notes" part
 * (each note with its author's email and time, marked as never sent) and the form under the
 * reply box that adds one (posted to `/inbox/{conversationId}/notes`, through messaging's notes
 * service, which seals the body and announces `conversation.note_added`). Notes are seen by the
 * portal's members only.
 *
 * @see docs/messaging.md "Inbox", "Working a conversation"
 */
import type { PortalMember } from '../../accounts/portal-members.ts';
import { Badge, Button, Field } from '../../browser/kit.tsx';
import { NOTE_MAX, type Note } from '../../messaging/conversations/conversations-schemas.ts';
import { shortTime } from './inbox-view.ts';

/** Notes shown in a thread: the latest ones. */
export const NOTES_SHOWN = 20;

/** A refused note: what was written and why it was refused. */
export interface NoteFormView {
  body: string;
  error: string;
}

/**
 * Why a posted note `body` is refused (the API's rules: 1–{@link NOTE_MAX} characters, not only
 * white space), or null when it is fine.
 */
export function noteError(body: string | undefined): string | null {
  if (body === undefined || !/\S/.test(body)) return 'Write the note.';
  if ([...body].length > NOTE_MAX) return `A note is at most ${NOTE_MAX} characters.`;
  return null;
}

/** The thread's private notes, oldest first (`notes` comes newest first, as the API lists). */
export function ThreadNotes(p: { notes: Note[]; members: PortalMember[]; now: Date }) {
  if (p.notes.length === 0) return null;
  const notes = [...p.notes].reverse();
  return (
    <section class="private-notes" aria-labelledby="private-notes-title" data-testid="notes">
      <h3 id="private-notes-title">Private notes</h3>
      <p class="muted">Seen by your team only, never sent to the person.</p>
      <ol class="thread" aria-label="Private notes">
        {notes.map((n) => {
          const author = n.authorId
            ? (p.members.find((m) => m.id === n.authorId)?.email ?? n.authorId)
            : 'A former member';
          const time = shortTime(n.createdAt, p.now);
          return (
            <li key={n.id} id={`n-${n.id}`} class="note" data-testid="note">
              <p class="badges">
                <Badge tone="warn" testid="note-private">
                  Private note
                </Badge>{' '}
                <span data-testid="note-author">{author}</span>{' '}
                <time dateTime={time.iso} class="muted">
                  {time.text}
                </time>
              </p>
              <p class="note-body">{n.body}</p>
            </li>
          );
        })}
      </ol>
    </section>
  );
}

/** The form under the reply box: "Add a private note". */
export function NoteForm(p: {
  conversationId: string;
  csrfToken: string;
  view?: NoteFormView | undefined;
}) {
  return (
    <form
      method="post"
      action={`/inbox/${p.conversationId}/notes`}
      data-testid="note-form"
      aria-label="Add a private note"
    >
      <input type="hidden" name="csrf" value={p.csrfToken} />
      <Field
        name="body"
        id="note-body"
        label="Add a private note"
        rows={2}
        value={p.view?.body}
        error={p.view?.error}
        help="Seen by your team only, never sent."
        maxLength={NOTE_MAX}
        required
      />
      <Button kind="secondary" testid="note-add">
        Add note
      </Button>
    </form>
  );
}
