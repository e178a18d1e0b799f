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
import type { DeskEntry, DeskTicket } from '../../tickets/agent-desk-service.ts';
import { ErrorFlash } from '../../browser/flash.tsx';
import { Badge, Button, DataTable, EmptyState, Field, PageHeader } from '../../browser/kit.tsx';
import { TicketForms, type AgentForm, type AgentFormState } from './agent-ticket-forms.tsx';
import {
  durationWords,
  QUEUE_STATUSES,
  statusTone,
  TICKET_PRIORITY_NAMES,
} from '../support/support-words.ts';

interface Signed {
  name: string;
  csrfToken: string;
}

export function AgentFrame(props: {
  title: string;
  agent?: Signed;
  /** The navigation entry this page is (marked as the current page). */
  current?: 'queue' | undefined;
  children: ComponentChildren;
}) {
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
        <a class="skip" href="#main">
          Skip to the content
        </a>
        <header class="shell-bar agent-bar">
          <a class="brand" href="/agent">
            <img src="/assets/favicon.svg" alt="" width="26" height="26" />
            Portico support
          </a>
          {props.agent && (
            <>
              <nav aria-label="Main">
                <ul class="nav">
                  <li>
                    <a href="/agent" aria-current={props.current === 'queue' ? 'page' : undefined}>
                      Queue
                    </a>
                  </li>
                </ul>
              </nav>
              <div class="shell-user">
                <span class="who">{props.agent.name}</span>
                <form method="post" action="/agent/logout">
                  <input type="hidden" name="csrf" value={props.agent.csrfToken} />
                  <button type="submit" class="secondary">
                    Sign out
                  </button>
                </form>
              </div>
            </>
          )}
        </header>
        <main id="main" class="wide">
          {props.children}
        </main>
      </body>
    </html>
  );
}

const option = (value: string) => ({ value, label: value });

export type { AgentForm, AgentFormState };

/** The queue's filters as the form holds them. */
export interface QueueFilterForm {
  status?: string | undefined;
  priority?: string | undefined;
  portal?: string | undefined;
  /** `me`, `none`, or undefined (anyone). */
  assigned?: string | undefined;
}

export function QueuePage(props: {
  agent: Signed;
  items: DeskTicket[];
  filter: QueueFilterForm;
  nextHref: string | null;
}) {
  const { filter } = props;
  return (
    <AgentFrame title="Queue" agent={props.agent} current="queue">
      <PageHeader title="Ticket queue" lead="Every portal's tickets, newest first." />
      <form class="filters" method="get" action="/agent" role="search">
        <Field
          name="status"
          id="q-status"
          label="Status"
          value={filter.status}
          options={[{ value: '', label: 'Any' }, ...QUEUE_STATUSES.map(option)]}
        />
        <Field
          name="priority"
          id="q-priority"
          label="Priority"
          value={filter.priority}
          options={[{ value: '', label: 'Any' }, ...TICKET_PRIORITY_NAMES.map(option)]}
        />
        <Field
          name="portal"
          id="q-portal"
          label="Portal code"
          value={filter.portal}
          inputMode="numeric"
          maxLength={20}
        />
        <Field
          name="assigned"
          id="q-assigned"
          label="Assigned"
          value={filter.assigned}
          options={[
            { value: '', label: 'Anyone' },
            { value: 'me', label: 'To me' },
            { value: 'none', label: 'Unassigned' },
          ]}
        />
        <Button kind="secondary">Filter</Button>
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
  /** A refusal that concerns no form field (an expired form, a closed ticket). */
  error?: string | undefined;
  /** A refused form, its error shown next to its field with the values kept. */
  refused?: AgentFormState | undefined;
}) {
  const { ticket: t, refused } = props;
  const closed = t.status === 'closed';
  return (
    <AgentFrame title={t.subject} agent={props.agent}>
      <section>
        <h1>{t.subject}</h1>
        <ErrorFlash>{props.error ?? (closed ? refused?.error : undefined)}</ErrorFlash>
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
      {!closed && <TicketForms {...props} />}
    </AgentFrame>
  );
}
