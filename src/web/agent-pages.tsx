/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The agent console's pages: the frame, the queue of every portal's tickets, and one ticket with
 * its thread, internal notes and the forms to reply, note, assign and change status. Plain HTML
 * forms in a frame of their own (an agent is no portal's user: no portal navigation).
 *
 * @see docs/support.md "The support team's side"
 */
import type { ComponentChildren } from 'preact';
import type { DeskEntry, DeskTicket } from '../tickets/agent-desk-service.ts';
import { ErrorFlash } from '../browser/flash.tsx';
import { Badge, DataTable, EmptyState, PageHeader } from '../browser/kit.tsx';
import {
  durationWords,
  QUEUE_STATUSES,
  statusTone,
  TICKET_PRIORITY_NAMES,
} from './support-words.ts';

interface Signed {
  name: string;
  csrfToken: string;
}

export function AgentFrame(props: { title: string; agent?: Signed; children: ComponentChildren }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${props.title} · Portico support`}</title>
        <link rel="icon" href="/assets/favicon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="/assets/portico.css" />
      </head>
      <body>
        <header>
          <a class="brand" href="/agent">
            Portico support
          </a>
          {props.agent && (
            <nav>
              <a href="/agent">Queue</a>
              <form method="post" action="/agent/logout">
                <span class="muted who">{props.agent.name}</span>
                <input type="hidden" name="csrf" value={props.agent.csrfToken} />
                <button type="submit" class="secondary">
                  Sign out
                </button>
              </form>
            </nav>
          )}
        </header>
        <main class="wide">{props.children}</main>
      </body>
    </html>
  );
}

/** The queue's filters as the form holds them. */
export interface QueueFilterForm {
  status?: string | undefined;
  priority?: string | undefined;
  portal?: string | undefined;
  /** `me`, `none`, or undefined (anyone). */
  assigned?: string | undefined;
}

function Select(props: {
  name: string;
  label: string;
  value?: string | undefined;
  options: readonly (readonly [string, string])[];
}) {
  return (
    <label>
      {props.label}
      <select name={props.name}>
        {props.options.map(([value, words]) => (
          <option key={value} value={value} selected={value === (props.value ?? '')}>
            {words}
          </option>
        ))}
      </select>
    </label>
  );
}

export function QueuePage(props: {
  agent: Signed;
  items: DeskTicket[];
  filter: QueueFilterForm;
  nextHref: string | null;
}) {
  const { filter } = props;
  return (
    <AgentFrame title="Queue" agent={props.agent}>
      <PageHeader title="Ticket queue" lead="Every portal's tickets, newest first." />
      <form class="filters" method="get" action="/agent">
        <Select
          name="status"
          label="Status"
          value={filter.status}
          options={[['', 'Any'], ...QUEUE_STATUSES.map((s) => [s, s] as const)]}
        />
        <Select
          name="priority"
          label="Priority"
          value={filter.priority}
          options={[['', 'Any'], ...TICKET_PRIORITY_NAMES.map((p) => [p, p] as const)]}
        />
        <label>
          Portal code
          <input type="text" name="portal" value={filter.portal ?? ''} inputmode="numeric" />
        </label>
        <Select
          name="assigned"
          label="Assigned"
          value={filter.assigned}
          options={[
            ['', 'Anyone'],
            ['me', 'To me'],
            ['none', 'Unassigned'],
          ]}
        />
        <button type="submit">Filter</button>
      </form>
      {props.items.length === 0 ? (
        <EmptyState title="No tickets match." testid="queue-empty" />
      ) : (
        <DataTable
          testid="queue"
          rows={props.items}
          rowKey={(t) => t.id}
          columns={[
            {
              label: 'Ticket',
              kind: 'long',
              cell: (t) => (
                <>
                  <a href={`/agent/tickets/${t.id}`}>{t.subject}</a>{' '}
                  <small class="id">{t.id}</small>
                </>
              ),
            },
            {
              label: 'Portal',
              kind: 'text',
              cell: (t) => (
                <>
                  {t.portalName} <small class="id">{t.portalCode}</small>
                </>
              ),
            },
            { label: 'Status', cell: (t) => <Badge tone={statusTone(t.status)}>{t.status}</Badge> },
            { label: 'Priority', cell: (t) => t.priority },
            { label: 'Assignee', kind: 'text', cell: (t) => t.assignee ?? '—' },
            { label: 'First response', cell: (t) => durationWords(t.timeToFirstResponseMs) },
            { label: 'Solved in', cell: (t) => durationWords(t.timeToSolveMs) },
          ]}
        />
      )}
      {props.nextHref && (
        <p class="pager">
          <a href={props.nextHref}>Older tickets</a>
        </p>
      )}
    </AgentFrame>
  );
}

function Entry({ entry }: { entry: DeskEntry }) {
  if (entry.kind === 'note') {
    return (
      <li class="warning" data-kind="note">
        <strong>Internal note</strong> · {entry.author} ·{' '}
        <time datetime={entry.createdAt}>{entry.createdAt.slice(0, 16).replace('T', ' ')} UTC</time>
        <p>{entry.body}</p>
      </li>
    );
  }
  const c = entry.comment;
  return (
    <li data-kind="comment">
      <strong>
        {c.author.type === 'agent'
          ? `${c.author.name} (support)`
          : `Customer (user ${c.author.userId})`}
      </strong>{' '}
      · <time datetime={c.createdAt}>{c.createdAt.slice(0, 16).replace('T', ' ')} UTC</time>
      <p>{c.body}</p>
    </li>
  );
}

export function AgentTicketPage(props: {
  agent: Signed & { agentId: number };
  ticket: DeskTicket;
  thread: DeskEntry[];
  agents: { agentId: number; name: string }[];
  error?: string | undefined;
}) {
  const { ticket: t, agent } = props;
  const base = `/agent/tickets/${t.id}`;
  const closed = t.status === 'closed';
  return (
    <AgentFrame title={t.subject} agent={agent}>
      <section>
        <h1>{t.subject}</h1>
        <ErrorFlash>{props.error}</ErrorFlash>
        <dl class="facts">
          <dt>Portal</dt>
          <dd>
            {t.portalName} <small class="id">{t.portalCode}</small>
          </dd>
          <dt>Status</dt>
          <dd data-testid="status">{t.status}</dd>
          <dt>Priority</dt>
          <dd>{t.priority}</dd>
          <dt>Assignee</dt>
          <dd data-testid="assignee">{t.assignee ?? 'Unassigned'}</dd>
          <dt>First response</dt>
          <dd>{durationWords(t.timeToFirstResponseMs)}</dd>
          <dt>Solved in</dt>
          <dd>{durationWords(t.timeToSolveMs)}</dd>
          <dt>Ticket</dt>
          <dd>
            <small class="id">{t.id}</small>
          </dd>
        </dl>
        <h2>Description</h2>
        <p>{t.description}</p>
        <h2>Thread</h2>
        <ul class="plain" data-testid="thread">
          {props.thread.map((e) => (
            <Entry key={e.kind === 'note' ? e.id : e.comment.id} entry={e} />
          ))}
        </ul>
      </section>
      {!closed && (
        <section>
          <h2>Reply to the customer</h2>
          <form method="post" action={`${base}/reply`}>
            <input type="hidden" name="csrf" value={agent.csrfToken} />
            <label for="reply">Reply</label>
            <textarea id="reply" name="body" rows={5} maxLength={10000} required />
            <label for="reply-status">Then set status</label>
            <select id="reply-status" name="status">
              <option value="">Keep ({t.status === 'new' ? 'open' : t.status})</option>
              <option value="pending">pending</option>
              <option value="solved">solved</option>
            </select>
            <button type="submit">Send reply</button>
          </form>
          <h2>Internal note</h2>
          <form method="post" action={`${base}/note`}>
            <input type="hidden" name="csrf" value={agent.csrfToken} />
            <label for="note">Note (agents only)</label>
            <textarea id="note" name="body" rows={3} maxLength={10000} required />
            <button type="submit" class="secondary">
              Add note
            </button>
          </form>
          <h2>Assignment and status</h2>
          <div class="actions">
            <form method="post" action={`${base}/assign`}>
              <input type="hidden" name="csrf" value={agent.csrfToken} />
              <input type="hidden" name="to" value={String(agent.agentId)} />
              <button type="submit">Assign to me</button>
            </form>
            <form method="post" action={`${base}/assign`}>
              <input type="hidden" name="csrf" value={agent.csrfToken} />
              <label for="assign-to">Assign to</label>
              <select id="assign-to" name="to">
                <option value="">Nobody</option>
                {props.agents.map((a) => (
                  <option
                    key={a.agentId}
                    value={String(a.agentId)}
                    selected={a.agentId === t.assigneeAgentId}
                  >
                    {a.name}
                  </option>
                ))}
              </select>
              <button type="submit" class="secondary">
                Assign
              </button>
            </form>
            <form method="post" action={`${base}/status`}>
              <input type="hidden" name="csrf" value={agent.csrfToken} />
              <label for="set-status">Status</label>
              <select id="set-status" name="status">
                {(['open', 'pending', 'solved'] as const).map((s) => (
                  <option key={s} value={s} selected={s === t.status}>
                    {s}
                  </option>
                ))}
              </select>
              <button type="submit" class="secondary">
                Set status
              </button>
            </form>
          </div>
        </section>
      )}
    </AgentFrame>
  );
}
