/**
 * The support commands of the admin CLI (registration only; the logic is in
 * admin/support-commands.ts): `agent create|list|disable`, `tickets list|show|reply|status`.
 *
 * @see docs/support.md "The support team's side"
 */
import type { Command } from 'commander';
import type { AgentSummary } from './accounts/agents-service.ts';
import { action, json } from './cli-execute.ts';
import { readNewPassword } from './cli-password.ts';
import type { DeskEntry, DeskTicket } from './tickets/agent-desk-service.ts';
import { AGENT_STATUSES } from './tickets/ticket-lifecycle.ts';

const agentLine = (a: AgentSummary) =>
  `${a.agentId}  ${a.email}  ${a.name}${a.disabledAt ? `  (disabled ${a.disabledAt})` : ''}`;

const ticketLine = (t: DeskTicket) =>
  `${t.id}  ${t.status}  ${t.priority}  portal ${t.portalCode}  ${t.assignee ?? 'unassigned'}  ${t.subject}`;

const entryLines = (e: DeskEntry) =>
  e.kind === 'note'
    ? `[${e.createdAt}] internal note by ${e.author}:\n  ${e.body}`
    : `[${e.comment.createdAt}] ${e.comment.author.type === 'agent' ? `${e.comment.author.name} (support)` : `customer user ${e.comment.author.userId}`}:\n  ${e.comment.body}`;

/** `agent create|list|disable`: the operator's support agents. */
export function addAgentCommands(program: Command): void {
  const cmd = program.command('agent').description("support agents (the operator's people)");
  cmd
    .command('create')
    .description(
      'create an agent; the password is typed twice at a terminal, or the first line of standard input',
    )
    .requiredOption('--email <email>', 'email address (unique; never shown to customers)')
    .requiredOption('--name <name>', 'display name customers see on replies')
    .addOption(json)
    .action(async (opts: Record<string, unknown>) => {
      const password = await readNewPassword();
      await action(
        'agent create',
        (o) => ({ email: o.email, name: o.name, password }),
        (r) => `Agent ${agentLine(r as AgentSummary)} created; they sign in at /agent/login.`,
      )(opts);
    });
  cmd
    .command('list')
    .description('list every agent')
    .addOption(json)
    .action(
      action(
        'agent list',
        () => ({}),
        (r) =>
          (r as AgentSummary[]).length === 0
            ? 'No agents.'
            : (r as AgentSummary[]).map(agentLine).join('\n'),
      ),
    );
  cmd
    .command('disable')
    .description('disable an agent: no more sign-in, every session ends')
    .requiredOption('--email <email>', 'email address of the agent')
    .addOption(json)
    .action(
      action(
        'agent disable',
        (o) => ({ email: o.email }),
        (r) => `Agent ${agentLine(r as AgentSummary)}.`,
      ),
    );
}

/** `tickets list|show|reply|status`: every portal's tickets, as the agent console. */
export function addTicketCommands(program: Command): void {
  const cmd = program
    .command('tickets')
    .description("every portal's support tickets (the agents' side)");
  cmd
    .command('list')
    .description('the queue, newest first (50 at most)')
    .option('--status <status>', 'only this status: new, open, pending, solved or closed')
    .addOption(json)
    .action(
      action(
        'tickets list',
        (o) => ({ ...(o.status !== undefined && { status: o.status }) }),
        (r) =>
          (r as DeskTicket[]).length === 0
            ? 'No tickets.'
            : (r as DeskTicket[]).map(ticketLine).join('\n'),
      ),
    );
  cmd
    .command('show')
    .description('a ticket, its thread and its internal notes')
    .requiredOption('--id <ticket>', 'ticket id (tkt_…)')
    .addOption(json)
    .action(
      action(
        'tickets show',
        (o) => ({ id: o.id }),
        (r) => {
          const { ticket, thread } = r as { ticket: DeskTicket; thread: DeskEntry[] };
          return [ticketLine(ticket), ticket.description, ...thread.map(entryLines)].join('\n');
        },
      ),
    );
  cmd
    .command('reply')
    .description('reply to the customer as an agent (or add an internal note with --internal)')
    .requiredOption('--id <ticket>', 'ticket id (tkt_…)')
    .requiredOption('--agent <email>', 'the agent replying')
    .requiredOption('--text <text>', 'the reply, 1–10,000 characters')
    .option('--internal', 'an internal note, seen by agents only', false)
    .addOption(json)
    .action(
      action(
        'tickets reply',
        (o) => ({ id: o.id, agent: o.agent, text: o.text, internal: o.internal === true }),
        (r) => {
          const x = r as { note?: { id: string }; comment?: { id: string } };
          return x.note ? `Internal note ${x.note.id} added.` : `Reply ${x.comment!.id} sent.`;
        },
      ),
    );
  cmd
    .command('status')
    .description(`set a ticket's status as an agent: ${AGENT_STATUSES.join(', ')}`)
    .requiredOption('--id <ticket>', 'ticket id (tkt_…)')
    .requiredOption('--agent <email>', 'the agent making the change')
    .requiredOption('--status <status>', AGENT_STATUSES.join(', '))
    .addOption(json)
    .action(
      action(
        'tickets status',
        (o) => ({ id: o.id, agent: o.agent, status: o.status }),
        (r) => ticketLine(r as DeskTicket),
      ),
    );
}
