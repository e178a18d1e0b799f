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
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import type { AgentsService } from '../accounts/agents-service.ts';
import { cookieOptions } from '../browser/cookies.ts';
import { sendPage } from '../browser/render.ts';
import type { AgentSession } from '../browser/session-store.ts';
import type { PageSessions } from '../browser/web-session.ts';
import { noteRequestError } from '../platform/access-log.ts';
import { randomBase64Url, safeEqual, sha256Hex } from '../platform/crypto.ts';
import { AppError } from '../platform/errors.ts';
import type { AgentDeskService } from '../tickets/agent-desk-service.ts';
import { AGENT_STATUSES, type AgentStatus } from '../tickets/ticket-lifecycle.ts';
import { AgentLoginPage, AgentTicketPage, QueuePage } from './agent-pages.tsx';
import { installSignInLimits, type SignInLimitSettings } from './sign-in-limits.ts';
import { CsrfBody, FormField, HtmlPage, Redirect } from './web-options.ts';

export interface AgentRoutesOptions {
  sessions: PageSessions;
  sessionTtlSeconds: number;
  signInLimits: SignInLimitSettings;
  agents: Pick<AgentsService, 'authenticateAgent' | 'listAgents'>;
  desk: AgentDeskService;
}

const LoginBody = Type.Object({
  email: FormField(1000),
  password: FormField(1024),
  csrf: FormField(100),
});
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

export async function agentRoutes(app: FastifyInstance, opts: AgentRoutesOptions): Promise<void> {
  const { sessions, desk } = opts;
  const { names, isProduction } = sessions;
  const limits = await installSignInLimits(app, opts.signInLimits);

  async function agentOf(request: FastifyRequest): Promise<AgentSession | null> {
    const id = request.cookies[names.session];
    return id ? sessions.store.findAgent(id) : null;
  }

  /** The agent, or null after redirecting to the agent sign-in (a portal user's session too). */
  async function agentOr(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<AgentSession | null> {
    const agent = await agentOf(request);
    if (!agent) reply.redirect('/agent/login', 302);
    return agent;
  }

  function loginCsrf(request: FastifyRequest, reply: FastifyReply): string {
    const existing = request.cookies[names.loginCsrf];
    if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
    const token = randomBase64Url(32);
    reply.setCookie(names.loginCsrf, token, cookieOptions(isProduction, 3600));
    return token;
  }

  app.get(
    '/agent/login',
    { schema: { response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      if (await agentOf(request)) return reply.redirect('/agent', 302);
      return sendPage(reply, <AgentLoginPage csrfToken={loginCsrf(request, reply)} />);
    },
  );

  app.post<{ Body: Static<typeof LoginBody> }>(
    '/agent/login',
    {
      schema: {
        body: LoginBody,
        response: { 303: Redirect, 401: HtmlPage, 403: HtmlPage, 429: HtmlPage },
      },
    },
    async (request, reply) => {
      const { email, password, csrf } = request.body;
      const cookie = request.cookies[names.loginCsrf];
      if (!cookie || !csrf || !safeEqual(cookie, csrf)) {
        const notice = 'The sign-in form had expired. Please sign in again.';
        return sendPage(
          reply,
          <AgentLoginPage csrfToken={loginCsrf(request, reply)} notice={notice} />,
          403,
        );
      }
      const refusal = await limits.refusal(request, email ?? '');
      if (refusal) {
        noteRequestError(request, { code: 'sign_in_rate_limited' });
        reply.header('retry-after', String(refusal.retryAfterSeconds));
        const notice = `Too many failed sign-in attempts. Please wait ${Math.ceil(refusal.retryAfterSeconds / 60)} minute(s) and try again.`;
        return sendPage(
          reply,
          <AgentLoginPage csrfToken={cookie} email={email ?? ''} notice={notice} />,
          429,
        );
      }
      const agent = email && password ? await opts.agents.authenticateAgent(email, password) : null;
      if (!agent) {
        await limits.countFailure(request, email ?? '');
        noteRequestError(request, { code: 'sign_in_refused' });
        return sendPage(
          reply,
          <AgentLoginPage csrfToken={cookie} email={email ?? ''} failed />,
          401,
        );
      }
      // A new session id at every sign-in; whatever session this browser had (a portal user's
      // or an agent's) ends: one browser session is one person's.
      const previous = request.cookies[names.session];
      if (previous) await sessions.store.destroy(sha256Hex(previous));
      const { sessionId } = await sessions.store.createForAgent(agent.agentId);
      reply.setCookie(
        names.session,
        sessionId,
        cookieOptions(isProduction, opts.sessionTtlSeconds),
      );
      reply.clearCookie(names.loginCsrf, cookieOptions(isProduction, 0));
      request.log.info({ agentId: agent.agentId }, 'agent signed in');
      return reply.redirect('/agent', 303);
    },
  );

  app.post<{ Body: Static<typeof CsrfBody> }>(
    '/agent/logout',
    { schema: { body: CsrfBody, response: { 303: Redirect } } },
    async (request, reply) => {
      const agent = await agentOf(request);
      if (agent && request.body.csrf && safeEqual(request.body.csrf, agent.csrfToken)) {
        await sessions.store.destroy(agent.idHash);
        sessions.clearCookie(reply);
      }
      return reply.redirect('/agent/login', 303);
    },
  );

  app.get<{ Querystring: Static<typeof QueueQuery> }>(
    '/agent',
    { schema: { querystring: QueueQuery, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const agent = await agentOr(request, reply);
      if (!agent) return reply;
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
      />,
      status,
    );
  }

  app.get<{ Params: Static<typeof TicketParams> }>(
    '/agent/tickets/:id',
    { schema: { params: TicketParams, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const agent = await agentOr(request, reply);
      if (!agent) return reply;
      return ticketPage(reply, agent, request.params.id);
    },
  );

  /** A form of the ticket page: agent and CSRF checked, then `act`; a refusal re-renders. */
  function ticketForm(
    path: string,
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
          response: { 303: Redirect, 302: Redirect, 403: HtmlPage, 409: HtmlPage },
        },
      },
      async (request, reply) => {
        const agent = await agentOr(request, reply);
        if (!agent) return reply;
        const { id } = request.params;
        if (!request.body.csrf || !safeEqual(request.body.csrf, agent.csrfToken)) {
          return ticketPage(
            reply,
            agent,
            id,
            'This form had expired; nothing was changed. Try again.',
            403,
          );
        }
        try {
          await act(agent, id, request.body, request.id);
        } catch (err) {
          if (
            err instanceof AppError &&
            (err.code === 'conflict' || err.code === 'invalid_request')
          ) {
            return ticketPage(reply, agent, id, err.message, err.status);
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
