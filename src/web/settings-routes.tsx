/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/settings`: the portal, its API token (regenerated here by the main administrator), the
 * provider connection and the audit log.
 *
 * @see docs/architecture.md "web/"
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { sendFormExpired, sendNotAllowed } from '../browser/refusal-pages.tsx';
import { sendPage } from '../browser/render.ts';
import type { WebSession } from '../browser/session-store.ts';
import { csrfOk, redirectToLogin } from '../browser/web-session.ts';
import { SettingsPage } from './pages/settings-page.tsx';
import {
  CsrfBody,
  FormField,
  HtmlPage,
  Redirect,
  sessionOr,
  type WebRoutesOptions,
} from './web-options.ts';

const SettingsQuery = Type.Object({ done: FormField(32) });
/** Confirmations `/settings?done=…` can show; anything else shows nothing. */
const DONE_NOTICES: Record<string, string> = {
  disconnected: 'Your provider account is disconnected and the stored access is deleted.',
  'not-connected': 'Your provider account was not connected; nothing changed.',
};

export async function settingsRoutes(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const { sessions, accounts, partner } = opts;

  async function renderSettings(
    request: FastifyRequest,
    reply: FastifyReply,
    session: WebSession,
    extra: { newToken?: string; notice?: string } = {},
  ) {
    const [portal, connection, auditEvents, activeSessions] = await Promise.all([
      accounts.showPortal(session.portalCode),
      partner.connectionSummary(session.portalId).catch((err: unknown) => {
        request.log.error({ err }, 'connection summary failed');
        return null;
      }),
      opts.recentAuditEvents(session.portalId),
      sessions.store.countActive(session.userId),
    ]);
    return sendPage(
      reply,
      <SettingsPage
        portal={{ code: portal.portalCode, name: portal.name }}
        user={{ id: session.userId, email: session.email, isMainAdmin: session.isMainAdmin }}
        activeSessions={activeSessions}
        csrfToken={session.csrfToken}
        token={portal.token}
        newToken={extra.newToken}
        connection={connection}
        auditEvents={auditEvents}
        userEmails={new Map(portal.users.map((u) => [String(u.userId), u.email]))}
        notice={extra.notice}
      />,
    );
  }

  app.get<{ Querystring: Static<typeof SettingsQuery> }>(
    '/settings',
    { schema: { querystring: SettingsQuery, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const session = await sessionOr(sessions, request, reply, '/settings');
      if (!session) return reply;
      const done = request.query.done;
      const notice = done && Object.hasOwn(DONE_NOTICES, done) ? DONE_NOTICES[done] : undefined;
      return renderSettings(request, reply, session, notice ? { notice } : {});
    },
  );

  app.post<{ Body: Static<typeof CsrfBody> }>(
    '/settings/token',
    { schema: { body: CsrfBody, response: { 200: HtmlPage, 303: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      const session = await sessions.read(request);
      if (!session) return redirectToLogin(reply, '/settings', 303);
      if (!csrfOk(session, request.body.csrf)) return sendFormExpired(reply, session);
      if (!session.isMainAdmin) {
        return sendNotAllowed(
          reply,
          session,
          'Only the main administrator of the portal can regenerate the API token.',
        );
      }
      const { token } = await accounts.regenerateToken({
        portalCode: session.portalCode,
        actor: { type: 'user', id: String(session.userId) },
      });
      request.log.info({ userId: session.userId }, 'API token regenerated from settings');
      // Answered in place (no redirect): the token exists only in this one response. The form's
      // CSRF token is spent, so reloading this page cannot regenerate a second time.
      const csrfToken = await sessions.store.rotateCsrf(session.idHash);
      return renderSettings(request, reply, { ...session, csrfToken }, { newToken: token });
    },
  );
}
