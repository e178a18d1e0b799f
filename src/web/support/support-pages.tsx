/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/support` for a signed-in portal user: their portal's tickets and a form to open one, and a
 * ticket's page with its thread, a reply box and close/reopen. What the API shows, never an
 * internal note.
 *
 * @see docs/support.md "The API"
 */
import { ErrorFlash } from '../../browser/flash.tsx';
import {
  Actions,
  Badge,
  Button,
  ConfirmStep,
  DataTable,
  EmptyState,
  Field,
  PageHeader,
  PostButton,
} from '../../browser/kit.tsx';
import { Layout } from '../../browser/layout.tsx';
import type { Ticket } from '../../tickets/ticket-schemas.ts';
import type { TicketComment } from '../../tickets/ticket-thread-schemas.ts';
import { statusTone } from './support-words.ts';

interface Signed {
  email: string;
  csrfToken: string;
}

const when = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

/** The new-ticket form as typed, and its errors next to their fields. */
export interface NewTicketForm {
  subject?: string | undefined;
  description?: string | undefined;
  priority?: string | undefined;
  errors: { subject?: string | undefined; description?: string | undefined };
}

/** The reply form of a ticket as typed, and its error. */
export interface ReplyForm {
  body?: string | undefined;
  error?: string | undefined;
}

const PRIORITY_OPTIONS = (['low', 'normal', 'high', 'urgent'] as const).map((p) => ({
  value: p,
  label: p,
}));

export function SupportListPage(props: {
  signedIn: Signed;
  items: Ticket[];
  nextHref: string | null;
  /** A refusal of the service that concerns no one field. */
  error?: string | undefined;
  form?: NewTicketForm | undefined;
}) {
  const form = props.form;
  return (
    <Layout title="Support" signedIn={props.signedIn} current="support" wide>
      <PageHeader title="Support" lead="Ask Portico's support team and follow their answers." />
      <section>
        <h2>Open a ticket</h2>
        <ErrorFlash>{props.error}</ErrorFlash>
        <form method="post" action="/support/tickets">
          <input type="hidden" name="csrf" value={props.signedIn.csrfToken} />
          <Field
            name="subject"
            id="subject"
            label="Subject"
            value={form?.subject}
            error={form?.errors.subject}
            help="One line, up to 200 characters."
            maxLength={200}
            required
          />
          <Field
            name="description"
            id="description"
            label="What happened?"
            rows={5}
            value={form?.description}
            error={form?.errors.description}
            help="What you did, what you expected and what you saw instead; no passwords or API tokens."
            maxLength={10000}
            required
          />
          <Field
            name="priority"
            id="priority"
            label="Priority"
            value={form?.priority ?? 'normal'}
            options={PRIORITY_OPTIONS}
          />
          <Actions>
            <Button>Open ticket</Button>
          </Actions>
        </form>
      </section>
      <section>
        <h2>Your tickets</h2>
        {props.items.length === 0 ? (
          <EmptyState title="No tickets yet." testid="tickets-empty" />
        ) : (
          <DataTable
            testid="tickets"
            rows={props.items}
            rowKey={(t) => t.id}
            columns={[
              {
                label: 'Subject',
                kind: 'text',
                cell: (t) => <a href={`/support/tickets/${t.id}`}>{t.subject}</a>,
              },
              {
                label: 'Status',
                cell: (t) => <Badge tone={statusTone(t.status)}>{t.status}</Badge>,
              },
              { label: 'Priority', cell: (t) => t.priority },
              { label: 'Comments', cell: (t) => String(t.commentCount) },
              {
                label: 'Opened',
                kind: 'text',
                cell: (t) => <time datetime={t.createdAt}>{when(t.createdAt)}</time>,
              },
            ]}
          />
        )}
        {props.nextHref && (
          <p class="pager">
            <a href={props.nextHref}>Older tickets</a>
          </p>
        )}
      </section>
    </Layout>
  );
}

export function SupportTicketPage(props: {
  signedIn: Signed;
  ticket: Ticket;
  comments: TicketComment[];
  /** A refusal that concerns no field (a status change, a form of a closed ticket). */
  error?: string | undefined;
  reply?: ReplyForm | undefined;
}) {
  const { ticket: t, signedIn } = props;
  const base = `/support/tickets/${t.id}`;
  return (
    <Layout title={t.subject} signedIn={signedIn} current="support">
      <section>
        <p>
          <a href="/support">← All tickets</a>
        </p>
        <h1>{t.subject}</h1>
        <ErrorFlash>
          {props.error ?? (t.status === 'closed' ? props.reply?.error : undefined)}
        </ErrorFlash>
        <dl class="facts">
          <dt>Status</dt>
          <dd data-testid="status">{t.status}</dd>
          <dt>Priority</dt>
          <dd>{t.priority}</dd>
          <dt>Handled by</dt>
          <dd>{t.assignee ?? 'Not yet assigned'}</dd>
          <dt>Opened</dt>
          <dd>
            <time datetime={t.createdAt}>{when(t.createdAt)}</time>
          </dd>
        </dl>
        <h2>Description</h2>
        <p>{t.description}</p>
        <h2>Conversation</h2>
        <ul class="plain" data-testid="thread">
          {props.comments.length === 0 && <li class="muted">No replies yet.</li>}
          {props.comments.map((c) => (
            <li key={c.id}>
              <strong>
                {c.author.type === 'agent' ? `${c.author.name} (Portico support)` : 'You'}
              </strong>{' '}
              · <time datetime={c.createdAt}>{when(c.createdAt)}</time>
              <p>{c.body}</p>
            </li>
          ))}
        </ul>
      </section>
      {t.status !== 'closed' ? (
        <section>
          <form method="post" action={`${base}/comments`}>
            <input type="hidden" name="csrf" value={signedIn.csrfToken} />
            <Field
              name="body"
              id="reply"
              label="Reply"
              rows={5}
              value={props.reply?.body}
              error={props.reply?.error}
              help="Up to 10,000 characters. Replying to a pending or solved ticket reopens it."
              maxLength={10000}
            />
            <Actions>
              <Button>Send reply</Button>
            </Actions>
          </form>
          <div class="actions">
            {(t.status === 'pending' || t.status === 'solved') && (
              <form method="post" action={`${base}/status`}>
                <input type="hidden" name="csrf" value={signedIn.csrfToken} />
                <input type="hidden" name="status" value="open" />
                <Button kind="secondary">Reopen</Button>
              </form>
            )}
            <PostButton action={`${base}/close`} csrf={signedIn.csrfToken}>
              Close ticket
            </PostButton>
          </div>
        </section>
      ) : (
        <p class="muted">This ticket is closed. Open a new ticket for anything else.</p>
      )}
    </Layout>
  );
}

/** The confirmation step before a ticket is closed (only a new ticket follows a closed one). */
export function SupportCloseConfirmPage(props: { signedIn: Signed; ticket: Ticket }) {
  const base = `/support/tickets/${props.ticket.id}`;
  return (
    <Layout title="Close ticket" signedIn={props.signedIn} current="support">
      <ConfirmStep
        title="Close this ticket?"
        csrfToken={props.signedIn.csrfToken}
        action={`${base}/close`}
        confirmLabel="Close ticket"
        cancelHref={base}
        cancelLabel="Keep it open"
      >
        <p>
          “{props.ticket.subject}” will be closed: nobody can reply to it any more, and anything
          else needs a new ticket.
        </p>
      </ConfirmStep>
    </Layout>
  );
}
