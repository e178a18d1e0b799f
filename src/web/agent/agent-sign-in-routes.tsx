/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The agent console's sign-in and sign-out (`/agent/login`, `/agent/logout`) and how its pages
 * find the agent of a request. The portal's rules: a double-submit CSRF token on the form, the
 * same sign-in rate limits, a new session id each time (ending whatever session the browser had).
 *
 * @see docs/support.md "The support team's side"
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { cookieOptions } from '../../browser/cookies.ts';
import { sendPage } from '../../browser/render.ts';
import type { PageSessions } from '../../browser/web-session.ts';
import { noteRequestError } from '../../platform/access-log.ts';
import { sha256Hex } from '../../platform/crypto.ts';
import { AgentLoginPage } from './agent-login-page.tsx';
import { signInFormToken } from '../page-area.ts';
import type { AgentsService } from '../../accounts/agents-service.ts';
import type { AgentDeskService } from '../../tickets/agent-desk-service.ts';
import type { SignInLimitSettings } from '../sign-in/sign-in-limits.ts';
import { installSignInLimits } from '../sign-in/sign-in-limits.ts';
import { CsrfBody, HtmlPage, Redirect, FormField } from '../web-options.ts';

/** What the console's routes need. */
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

export async function agentSignInRoutes(
  app: FastifyInstance,
  opts: AgentRoutesOptions,
): Promise<void> {
  const { sessions } = opts;
  const { names, isProduction } = sessions;
  const limits = await installSignInLimits(app, opts.signInLimits);

  app.get(
    '/agent/login',
    {
      config: { page: { public: true } },
      schema: { response: { 200: HtmlPage, 302: Redirect } },
    },
    async (request, reply) => {
      const id = request.cookies[names.session];
      if (id && (await sessions.store.findAgent(id))) return reply.redirect('/agent', 302);
      return sendPage(
        reply,
        <AgentLoginPage csrfToken={signInFormToken(sessions, request, reply)} />,
      );
    },
  );

  app.post<{ Body: Static<typeof LoginBody> }>(
    '/agent/login',
    {
      config: { page: { signInForm: true } },
      schema: {
        body: LoginBody,
        response: { 303: Redirect, 401: HtmlPage, 403: HtmlPage, 429: HtmlPage },
      },
    },
    async (request, reply) => {
      const { email, password } = request.body;
      // The guard checked it against the form's token.
      const cookie = signInFormToken(sessions, request, reply);
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
    {
      config: { page: { signOut: true } },
      schema: { body: CsrfBody, response: { 303: Redirect } },
    },
    async (request, reply) => {
      const agent = request.agentSession;
      if (agent) {
        await sessions.store.destroy(agent.idHash);
        sessions.clearCookie(reply);
      }
      return reply.redirect('/agent/login', 303);
    },
  );
}

/** The agent sign-in form's answer to a stale double-submit token. */
export function agentSignInExpired(
  sessions: PageSessions,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const notice = 'The sign-in form had expired. Please sign in again.';
  return sendPage(
    reply,
    <AgentLoginPage csrfToken={signInFormToken(sessions, request, reply)} notice={notice} />,
    403,
  );
}
