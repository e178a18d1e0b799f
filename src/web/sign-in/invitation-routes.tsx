/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The invitation links: `GET /invite/{token}` shows the password form of a valid link (404 for
 * an unknown or used one, 410 for an expired one), `POST /invite/{token}` sets the password and
 * signs the member in. Part of the sign-in area: the form is protected by the sign-in's
 * double-submit token, a bad link counts as a failed sign-in against the sign-in rate limits,
 * and the session starts exactly as a password sign-in's does. The token is a path segment, so
 * the access log writes the route's pattern, never the path; the pages send
 * `Referrer-Policy: no-referrer`.
 *
 * @see docs/decisions/0065-team-roles-and-invitations.md
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Forgot_Password_Cheat_Sheet.html#url-tokens
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { MessagePage } from '../../browser/message-page.tsx';
import { sendPage } from '../../browser/render.ts';
import { noteRequestError } from '../../platform/access-log.ts';
import { UsageError } from '../../platform/errors.ts';
import { signInFormToken } from '../page-area.ts';
import { FormField, HtmlPage, Redirect, type WebRoutesOptions } from '../web-options.ts';
import { InvitationGonePage, InvitationPage } from './invitation-page.tsx';
import type { SignInLimits } from './sign-in-limits.ts';

/** Start a session for `userId` on this reply (sign-in-routes.tsx). */
export type SignIn = (
  request: FastifyRequest,
  reply: FastifyReply,
  userId: number,
) => Promise<void>;

const Params = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
const Body = Type.Object({
  csrf: FormField(100),
  email: FormField(1000),
  password: FormField(1024),
  password2: FormField(1024),
});
const Responses = {
  200: HtmlPage,
  303: Redirect,
  400: HtmlPage,
  403: HtmlPage,
  404: HtmlPage,
  410: HtmlPage,
  429: HtmlPage,
};

/**
 * 403 for an invitation form whose double-submit token had expired (or that came from another
 * site): nothing changed, and the link's page is one click away. Null for any other form.
 */
export function invitationFormExpired(
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply | null {
  const path = request.url.split('?')[0] ?? '';
  if (!/^\/invite\/[^/]+$/.test(path)) return null;
  reply.header('referrer-policy', 'no-referrer');
  return sendPage(
    reply,
    <MessagePage title="This form had expired">
      <p>
        Nothing was changed. <a href={path}>Open your invitation again</a> and choose your password.
      </p>
    </MessagePage>,
    403,
  );
}

export function invitationRoutes(
  app: FastifyInstance,
  opts: WebRoutesOptions,
  deps: { limits: SignInLimits; signIn: SignIn },
): void {
  const { sessions, team } = opts;

  const gone = (reply: FastifyReply, expired: boolean) =>
    sendPage(reply, <InvitationGonePage expired={expired} />, expired ? 410 : 404);

  app.get<{ Params: Static<typeof Params> }>(
    '/invite/:token',
    {
      config: { page: { public: true }, logRoutePattern: true },
      schema: { params: Params, response: Responses },
    },
    async (request, reply) => {
      reply.header('referrer-policy', 'no-referrer');
      const found = await team.invitation(request.params.token);
      if (found.state !== 'valid') return gone(reply, found.state === 'expired');
      return sendPage(
        reply,
        <InvitationPage
          action={`/invite/${request.params.token}`}
          csrfToken={signInFormToken(sessions, request, reply)}
          email={found.email}
          portalName={found.portalName}
          role={found.role}
        />,
      );
    },
  );

  app.post<{ Params: Static<typeof Params>; Body: Static<typeof Body> }>(
    '/invite/:token',
    {
      config: { page: { signInForm: true }, logRoutePattern: true },
      schema: { params: Params, body: Body, response: Responses },
    },
    async (request, reply) => {
      reply.header('referrer-policy', 'no-referrer');
      const { token } = request.params;
      const { password = '', password2 = '' } = request.body;
      // Before any password hashing, as the sign-in: a refused attempt costs no scrypt work.
      const refusal = await deps.limits.refusal(request, '');
      if (refusal) {
        noteRequestError(request, { code: 'sign_in_rate_limited' });
        reply.header('retry-after', String(refusal.retryAfterSeconds));
        return sendPage(
          reply,
          <MessagePage title="Too many attempts">
            <p>
              Too many invitation links that do not work came from here. Please wait{' '}
              {Math.ceil(refusal.retryAfterSeconds / 60)} minute(s) and open your link again.
            </p>
          </MessagePage>,
          429,
        );
      }
      const found = await team.invitation(token);
      if (found.state !== 'valid') {
        await deps.limits.countFailure(request, '');
        noteRequestError(request, { code: 'invitation_refused' });
        return gone(reply, found.state === 'expired');
      }
      const again = (error: string) =>
        sendPage(
          reply,
          <InvitationPage
            action={`/invite/${token}`}
            csrfToken={signInFormToken(sessions, request, reply)}
            email={found.email}
            portalName={found.portalName}
            role={found.role}
            error={error}
          />,
          400,
        );
      if (password !== password2) return again('The two passwords are not the same.');
      let accepted: Awaited<ReturnType<typeof team.acceptInvitation>>;
      try {
        accepted = await team.acceptInvitation({ token, password });
      } catch (err) {
        if (!(err instanceof UsageError)) throw err;
        return again(err.message);
      }
      // Used or expired between the read above and this one.
      if (accepted.outcome !== 'accepted') return gone(reply, accepted.outcome === 'expired');
      await deps.signIn(request, reply, accepted.userId);
      return reply.redirect('/inbox', 303);
    },
  );
}
