/**
 * The support commands: `agent create|list|disable` (the operator's support agents) and
 * `tickets list|show|reply|status` (every portal's tickets, as the agent console shows them),
 * so a script does what the console does. Internal notes are shown by `tickets show` (the
 * operator's side), never elsewhere.
 *
 * @see docs/support.md
 * @see docs/reference/cli.md
 */
import { Type } from 'typebox';
import type { AgentSummary } from '../accounts/agents-service.ts';
import { UsageError } from '../platform/errors.ts';
import type { Services } from '../services.ts';
import type { DeskEntry, DeskTicket } from '../tickets/agent-desk-service.ts';
import { AGENT_STATUSES } from '../tickets/ticket-lifecycle.ts';
import { cliActor, defineCommand } from './command.ts';
import { readNewPassword } from './password.ts';

const Email = Type.String({ minLength: 1, maxLength: 1000 });
const TicketId = Type.String({ minLength: 1, maxLength: 64 });
const TICKET_STATUSES = ['new', 'open', 'pending', 'solved', 'closed'] as const;

const agentEmailOption = { value: '<email>', description: 'email address of the agent' };
const ticketOption = { value: '<ticket>', description: 'ticket id (tkt_…)' };

const agentLine = (a: AgentSummary) =>
  `${a.agentId}  ${a.email}  ${a.name}${a.disabledAt ? `  (disabled ${a.disabledAt})` : ''}`;

const ticketLine = (t: DeskTicket) =>
  `${t.id}  ${t.status}  ${t.priority}  portal ${t.portalCode}  ${t.assignee ?? 'unassigned'}  ${t.subject}`;

const entryLines = (e: DeskEntry) =>
  e.kind === 'note'
    ? `[${e.createdAt}] internal note by ${e.author}:\n  ${e.body}`
    : `[${e.comment.createdAt}] ${e.comment.author.type === 'agent' ? `${e.comment.author.name} (support)` : `customer user ${e.comment.author.userId}`}:\n  ${e.comment.body}`;

/** The enabled agent with this email, for `--agent`. */
async function agentIdOf(services: Services, email: string): Promise<number> {
  const agent = await services.agents.findActiveAgent(email);
  if (!agent) throw new UsageError(`No enabled agent ${email}.`, 'not_found');
  return agent.agentId;
}

export const agentCreate = defineCommand({
  name: 'agent create',
  description:
    'create a support agent: the password is typed twice at a terminal, or the first line of ' +
    'standard input when piped',
  args: Type.Object({
    email: Email,
    name: Type.String({ minLength: 1, maxLength: 1000 }),
    password: Type.String({ maxLength: 1024 }),
  }),
  options: {
    email: { value: '<email>', description: 'email address (unique; never shown to customers)' },
    name: { value: '<name>', description: 'display name customers see on replies' },
  },
  run: async (services, a) => services.agents.createAgent({ ...a, actor: await cliActor() }),
  // Never an option: arguments are visible in the process list and kept in shell history.
  send: async (o, exec) =>
    exec({ email: String(o.email), name: String(o.name), password: await readNewPassword() }),
  print: (a) => `Agent ${agentLine(a)} created; they sign in at /agent/login.`,
});

export const agentList = defineCommand({
  name: 'agent list',
  description: 'list every support agent',
  args: Type.Object({}),
  options: {},
  run: (services) => services.agents.listAgents(),
  print: (agents) => (agents.length === 0 ? 'No agents.' : agents.map(agentLine).join('\n')),
});

export const agentDisable = defineCommand({
  name: 'agent disable',
  description: 'disable a support agent: no more sign-in, every session ends',
  args: Type.Object({ email: Email }),
  options: { email: agentEmailOption },
  run: async (services, a) =>
    services.agents.disableAgent({ email: a.email, actor: await cliActor() }),
  print: (a) => `Agent ${agentLine(a)}.`,
});

export const ticketsList = defineCommand({
  name: 'tickets list',
  description: "every portal's tickets, newest first (50 at most)",
  args: Type.Object({ status: Type.Optional(Type.Enum(TICKET_STATUSES)) }),
  options: {
    status: { value: '<status>', description: `only this status: ${TICKET_STATUSES.join(', ')}` },
  },
  run: async (services, a) =>
    (await services.desk.queue({ status: a.status }, { limit: 50 })).items,
  print: (tickets) => (tickets.length === 0 ? 'No tickets.' : tickets.map(ticketLine).join('\n')),
});

export const ticketsShow = defineCommand({
  name: 'tickets show',
  description: 'a ticket, its thread and its internal notes',
  args: Type.Object({ id: TicketId }),
  options: { id: ticketOption },
  run: (services, a) => services.desk.ticket(a.id),
  print: ({ ticket, thread }) =>
    [ticketLine(ticket), ticket.description, ...thread.map(entryLines)].join('\n'),
});

export const ticketsReply = defineCommand({
  name: 'tickets reply',
  description: 'reply to the customer as an agent (or add an internal note with --internal)',
  args: Type.Object({
    id: TicketId,
    agent: Email,
    text: Type.String({ minLength: 1, maxLength: 10_000 }),
    internal: Type.Optional(Type.Boolean()),
  }),
  options: {
    id: ticketOption,
    agent: { value: '<email>', description: 'the agent replying' },
    text: { value: '<text>', description: 'the reply, 1–10,000 characters' },
    internal: { description: 'an internal note, seen by agents only' },
  },
  run: async (services, a) => {
    const agentId = await agentIdOf(services, a.agent);
    return a.internal === true
      ? { note: await services.desk.note({ agentId, ticketId: a.id, body: a.text }) }
      : { comment: await services.desk.reply({ agentId, ticketId: a.id, body: a.text }) };
  },
  print: (r) => ('note' in r ? `Internal note ${r.note.id} added.` : `Reply ${r.comment.id} sent.`),
});

export const ticketsStatus = defineCommand({
  name: 'tickets status',
  description: `set a ticket's status as an agent: ${AGENT_STATUSES.join(', ')}`,
  args: Type.Object({ id: TicketId, agent: Email, status: Type.Enum(AGENT_STATUSES) }),
  options: {
    id: ticketOption,
    agent: { value: '<email>', description: 'the agent making the change' },
    status: { value: '<status>', description: AGENT_STATUSES.join(', ') },
  },
  run: async (services, a) => {
    const agentId = await agentIdOf(services, a.agent);
    await services.desk.setStatus({ agentId, ticketId: a.id, status: a.status });
    return (await services.desk.ticket(a.id)).ticket;
  },
  print: ticketLine,
});
