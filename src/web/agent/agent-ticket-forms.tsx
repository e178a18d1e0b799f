/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The agent console's forms of an open ticket: reply (and the status after it), internal note,
 * assignment and status, on the kit's fields; a refused form shows its error next to its field
 * with what was typed or chosen kept.
 *
 * @see docs/support.md "The support team's side"
 */
import { Actions, Button, Field } from '../../browser/kit.tsx';
import type { DeskTicket } from '../../tickets/agent-desk-service.ts';

const option = (value: string) => ({ value, label: value });

/** The ticket page's forms. */
export type AgentForm = 'reply' | 'note' | 'status' | 'assign';

/** A refused form of the ticket page: which, its error, and what was typed or chosen. */
export interface AgentFormState {
  form: AgentForm;
  error: string;
  body?: string | undefined;
  status?: string | undefined;
  to?: string | undefined;
}

export interface TicketFormsProps {
  agent: { agentId: number; csrfToken: string };
  ticket: DeskTicket;
  agents: { agentId: number; name: string }[];
  refused?: AgentFormState | undefined;
}

/** The reply, note, assignment and status forms of an open ticket. */
export function TicketForms(props: TicketFormsProps) {
  const { ticket: t, agent } = props;
  const base = `/agent/tickets/${t.id}`;
  const refused = (form: AgentForm) => (props.refused?.form === form ? props.refused : undefined);
  const reply = refused('reply');
  const note = refused('note');
  const assign = refused('assign');
  const status = refused('status');
  const csrf = <input type="hidden" name="csrf" value={agent.csrfToken} />;
  return (
    <>
      <section>
        <h2>Reply to the customer</h2>
        <form method="post" action={`${base}/reply`}>
          {csrf}
          <Field
            name="body"
            id="reply"
            label="Reply"
            rows={5}
            value={reply?.body}
            error={reply?.error}
            help="The customer sees it; up to 10,000 characters."
            maxLength={10000}
            required
          />
          <Field
            name="status"
            id="reply-status"
            label="Then set status"
            value={reply?.status ?? ''}
            options={[
              { value: '', label: `Keep (${t.status === 'new' ? 'open' : t.status})` },
              option('pending'),
              option('solved'),
            ]}
          />
          <Actions>
            <Button>Send reply</Button>
          </Actions>
        </form>
      </section>
      <section>
        <h2>Internal note</h2>
        <form method="post" action={`${base}/note`}>
          {csrf}
          <Field
            name="body"
            id="note"
            label="Note (agents only)"
            rows={3}
            value={note?.body}
            error={note?.error}
            help="Never shown to the customer."
            maxLength={10000}
            required
          />
          <Actions>
            <Button kind="secondary">Add note</Button>
          </Actions>
        </form>
      </section>
      <section>
        <h2>Assignment and status</h2>
        <form method="post" action={`${base}/assign`}>
          {csrf}
          <input type="hidden" name="to" value={String(agent.agentId)} />
          <Button>Assign to me</Button>
        </form>
        <div class="grid-2">
          <form method="post" action={`${base}/assign`}>
            {csrf}
            <Field
              name="to"
              id="assign-to"
              label="Assign to"
              value={assign?.to ?? (t.assigneeAgentId === null ? '' : String(t.assigneeAgentId))}
              error={assign?.error}
              options={[
                { value: '', label: 'Nobody' },
                ...props.agents.map((a) => ({ value: String(a.agentId), label: a.name })),
              ]}
            />
            <Button kind="secondary">Assign</Button>
          </form>
          <form method="post" action={`${base}/status`}>
            {csrf}
            <Field
              name="status"
              id="set-status"
              label="Status"
              value={status?.status ?? t.status}
              error={status?.error}
              options={['open', 'pending', 'solved'].map(option)}
            />
            <Button kind="secondary">Set status</Button>
          </form>
        </div>
      </section>
    </>
  );
}
