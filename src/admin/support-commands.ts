/**
 * The support operator commands (CLI and admin socket alike): `agent create|list|disable` and
 * `tickets list|show|reply|status`, over the agents service and the agents' desk, so a script
 * does what the agent console does. Internal notes are shown by `tickets show` (the operator's
 * side), never elsewhere.
 *
 * @see docs/support.md "The support team's side"
 */
import { Type, type Static, type TSchema } from 'typebox';
import { CLI_ACTOR } from '../audit/audit-log.ts';
import { AppError, UsageError } from '../platform/errors.ts';
import type { Services } from '../services.ts';
import { AGENT_STATUSES } from '../tickets/ticket-lifecycle.ts';

const Email = Type.String({ minLength: 1, maxLength: 1000 });
const TicketId = Type.String({ minLength: 1, maxLength: 64 });
const Text = Type.String({ minLength: 1, maxLength: 10_000 });

function command<S extends TSchema>(
  args: S,
  run: (services: Services, args: Static<S>) => Promise<unknown>,
) {
  return { args, run } as {
    args: TSchema;
    run(services: Services, args: unknown): Promise<unknown>;
  };
}

/** The desk's refusals as the CLI's (exit 1 with the message; `not_found` kept). */
async function refusals<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (
      err instanceof AppError &&
      ['not_found', 'conflict', 'invalid_request'].includes(err.code)
    ) {
      throw new UsageError(err.message, err.code === 'not_found' ? 'not_found' : 'refused');
    }
    throw err;
  }
}

/** The enabled agent with this email, for `--agent`. */
async function agentIdOf(services: Services, email: string): Promise<number> {
  const agent = await services.agents.findActiveAgent(email);
  if (!agent) throw new UsageError(`No enabled agent ${email}.`, 'not_found');
  return agent.agentId;
}

export const SUPPORT_COMMANDS = {
  'agent create': command(
    Type.Object({
      email: Email,
      name: Type.String({ maxLength: 1000 }),
      password: Type.String({ maxLength: 1024 }),
    }),
    (services, a) => services.agents.createAgent({ ...a, actor: CLI_ACTOR }),
  ),
  'agent list': command(Type.Object({}), (services) => services.agents.listAgents()),
  'agent disable': command(Type.Object({ email: Email }), (services, a) =>
    services.agents.disableAgent({ email: a.email, actor: CLI_ACTOR }),
  ),
  'tickets list': command(
    Type.Object({
      status: Type.Optional(Type.Enum(['new', 'open', 'pending', 'solved', 'closed'])),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    }),
    async (services, a) =>
      (await services.desk.queue({ status: a.status }, { limit: a.limit ?? 50 })).items,
  ),
  'tickets show': command(Type.Object({ id: TicketId }), (services, a) =>
    refusals(() => services.desk.ticket(a.id)),
  ),
  'tickets reply': command(
    Type.Object({ id: TicketId, agent: Email, text: Text, internal: Type.Boolean() }),
    async (services, a) => {
      const agentId = await agentIdOf(services, a.agent);
      return refusals(async () =>
        a.internal
          ? { note: await services.desk.note({ agentId, ticketId: a.id, body: a.text }) }
          : { comment: await services.desk.reply({ agentId, ticketId: a.id, body: a.text }) },
      );
    },
  ),
  'tickets status': command(
    Type.Object({ id: TicketId, agent: Email, status: Type.Enum(AGENT_STATUSES) }),
    async (services, a) => {
      const agentId = await agentIdOf(services, a.agent);
      await refusals(() => services.desk.setStatus({ agentId, ticketId: a.id, status: a.status }));
      return refusals(async () => (await services.desk.ticket(a.id)).ticket);
    },
  ),
};
