/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The agent console: `/agent/login`, `/agent/logout`, the queue at `/agent`, a ticket at
 * `/agent/tickets/{id}` and its forms (reply, note, assign, status). Sign-in follows the portal's
 * rules (double-submit CSRF token on the form, the same rate limits, a new session id each time);
 * every other form carries the session's CSRF token. A portal user's session never opens these
 * pages (it is not an agent's session), and an agent's session opens no portal page.
 *
 * @see docs/support.md "The support team's side"
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type, type Static } from 'typebox';
import { sendPage } from '../../browser/render.ts';
import type { AgentSession } from '../../browser/session-store.ts';
import { AppError } from '../../platform/errors.ts';
import { AGENT_STATUSES, type AgentStatus } from '../../tickets/ticket-lifecycle.ts';
import { AgentTicketPage, QueuePage, type AgentForm, type AgentFormState } from './agent-pages.tsx';
import {
  agentSignInExpired,
  agentSignInRoutes,
  type AgentRoutesOptions,
} from './agent-sign-in-routes.tsx';
import { guardAgentArea, signedInAgent } from '../page-area.ts';
import { FormField, HtmlPage, Redirect } from '../web-options.ts';

export type { AgentRoutesOptions };

const QueueQuery = Type.Object({
  status: FormField(20),
  priority: FormField(20),
  portal: FormField(20),
  assigned: FormField(10),
  cursor: FormField(200),
});
const TicketParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
/** Every form of the ticket page: the CSRF token and what that form carries. */
const TicketForm = Type.Object({
  csrf: FormField(100),
  body: FormField(10_000),
  status: FormField(20),
  to: FormField(20),
});
type TicketFormBody = Static<typeof TicketForm>;

const STATUSES = ['new', 'open', 'pending', 'solved', 'closed'] as const;
const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
const oneOf = <T extends string>(values: readonly T[], v: string | undefined): T | undefined =>
  values.find((x) => x === v);

/** Register the console: sign-in and sign-out, the queue, a ticket and its forms. */
export async function agentRoutes(app: FastifyInstance, opts: AgentRoutesOptions): Promise<void> {
  let ticketPage: TicketPageFn | null = null;
  guardAgentArea(app, opts.sessions, {
    // A ticket's form: its page again, nothing changed; sign-out: nothing ends.
    formExpired: (request, reply, agent) => {
      const id = (request.params as { id?: string } | undefined)?.id;
      if (!id || !ticketPage) return reply.redirect('/agent/login', 303);
      const words = 'This form had expired; nothing was changed. Try again.';
      return ticketPage(reply, agent, id, words, 403);
    },
    signInExpired: (request, reply) => agentSignInExpired(opts.sessions, request, reply),
  });
  await agentSignInRoutes(app, opts);
  ticketPage = agentConsoleRoutes(app, opts);
  agentTicketForms(app, opts, ticketPage);
}

type TicketPageFn = (
  reply: FastifyReply,
  agent: AgentSession,
  id: string,
  error?: string,
  status?: number,
  refused?: AgentFormState,
) => Promise<FastifyReply>;

/** The queue and a ticket's page; returns the ticket page's renderer for the forms. */
function agentConsoleRoutes(app: FastifyInstance, opts: AgentRoutesOptions): TicketPageFn {
  const { desk } = opts;
  app.get<{ Querystring: Static<typeof QueueQuery> }>(
    '/agent',
    { schema: { querystring: QueueQuery, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const agent = signedInAgent(request);
      const q = request.query;
      const filter = {
        status: oneOf(STATUSES, q.status),
        priority: oneOf(PRIORITIES, q.priority),
        portalCode: q.portal && /^\d{1,20}$/.test(q.portal) ? q.portal : undefined,
        assigneeAgentId: q.assigned === 'me' ? agent.agentId : undefined,
        unassigned: q.assigned === 'none',
      };
      const page = await desk.queue(filter, { limit: 25, cursor: q.cursor || undefined });
      const kept = Object.entries({
        status: filter.status,
        priority: filter.priority,
        portal: filter.portalCode,
        assigned: q.assigned,
      }).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== '');
      const nextHref = page.nextCursor
        ? `/agent?${new URLSearchParams([...kept, ['cursor', page.nextCursor]]).toString()}`
        : null;
      return sendPage(
        reply,
        <QueuePage
          agent={{ name: agent.name, csrfToken: agent.csrfToken }}
          items={page.items}
          filter={{
            status: filter.status,
            priority: filter.priority,
            portal: filter.portalCode,
            assigned: q.assigned,
          }}
          nextHref={nextHref}
        />,
      );
    },
  );

  async function ticketPage(
    reply: FastifyReply,
    agent: AgentSession,
    id: string,
    error?: string,
    status = 200,
    refused?: AgentFormState,
  ) {
    const { ticket, thread } = await desk.ticket(id);
    const agents = (await opts.agents.listAgents())
      .filter((a) => a.disabledAt === null)
      .map((a) => ({ agentId: a.agentId, name: a.name }));
    return sendPage(
      reply,
      <AgentTicketPage
        agent={{ ...agent, name: agent.name }}
        ticket={ticket}
        thread={thread}
        agents={agents}
        error={error}
        refused={refused}
      />,
      status,
    );
  }

  app.get<{ Params: Static<typeof TicketParams> }>(
    '/agent/tickets/:id',
    { schema: { params: TicketParams, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      return ticketPage(reply, signedInAgent(request), request.params.id);
    },
  );

  return ticketPage;
}

/** The ticket page's forms: reply, note, status, assign. */
function agentTicketForms(
  app: FastifyInstance,
  opts: AgentRoutesOptions,
  ticketPage: TicketPageFn,
): void {
  const { desk } = opts;

  /** A form of the ticket page (agent and CSRF checked by the guard): `act`; a refusal re-renders. */
  function ticketForm(
    path: AgentForm,
    act: (
      agent: AgentSession,
      id: string,
      form: TicketFormBody,
      requestId: string,
    ) => Promise<void>,
  ) {
    app.post<{ Params: Static<typeof TicketParams>; Body: TicketFormBody }>(
      `/agent/tickets/:id/${path}`,
      {
        schema: {
          params: TicketParams,
          body: TicketForm,
          response: { 303: Redirect, 302: Redirect, 400: HtmlPage, 403: HtmlPage, 409: HtmlPage },
        },
      },
      async (request, reply) => {
        const agent = signedInAgent(request);
        const { id } = request.params;
        try {
          await act(agent, id, request.body, request.id);
        } catch (err) {
          if (
            err instanceof AppError &&
            (err.code === 'conflict' || err.code === 'invalid_request')
          ) {
            const { body, status, to } = request.body;
            return ticketPage(reply, agent, id, undefined, err.status, {
              form: path,
              error: err.message,
              body,
              status,
              to,
            });
          }
          throw err;
        }
        return reply.redirect(`/agent/tickets/${id}`, 303);
      },
    );
  }

  const requireText = (text: string | undefined): string => {
    if (!text || !/\S/.test(text)) throw new AppError('invalid_request', 'Write something first.');
    return text;
  };

  ticketForm('reply', async (agent, id, form, requestId) => {
    const status = oneOf(AGENT_STATUSES, form.status);
    await desk.reply({
      agentId: agent.agentId,
      ticketId: id,
      body: requireText(form.body),
      status,
      requestId,
    });
  });
  ticketForm('note', async (agent, id, form) => {
    await desk.note({ agentId: agent.agentId, ticketId: id, body: requireText(form.body) });
  });
  ticketForm('status', async (agent, id, form, requestId) => {
    const status: AgentStatus | undefined = oneOf(AGENT_STATUSES, form.status);
    if (!status) throw new AppError('invalid_request', 'Choose open, pending or solved.');
    await desk.setStatus({ agentId: agent.agentId, ticketId: id, status, requestId });
  });
  ticketForm('assign', async (agent, id, form, requestId) => {
    const to = form.to && /^\d{1,9}$/.test(form.to) ? Number(form.to) : null;
    await desk.assign({ agentId: agent.agentId, ticketId: id, toAgentId: to, requestId });
  });
}
