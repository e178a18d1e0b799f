/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/settings/team`: every member sees the team and sets their own availability; an
 * administrator invites (the one-time link travels POST → 303 → GET, kept server-side in the
 * session for one read, never in a URL), changes roles, and disables or removes a member after a
 * confirmation step. An agent's change is refused with the 403 page before anything is read. A
 * refusal of the rules (a taken email, the last administrator) comes back as the page with its
 * reason (400; 404 for a member of no portal or another), nothing changed.
 *
 * @see docs/how-to/work-the-inbox-as-a-team.md
 * @see docs/decisions/0065-team-roles-and-invitations.md
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { flashOf } from '../../../browser/flash.tsx';
import { sendNotAllowed } from '../../../browser/refusal-pages.tsx';
import { sendPage } from '../../../browser/render.ts';
import type { WebSession } from '../../../browser/session-store.ts';
import { UsageError } from '../../../platform/errors.ts';
import { guardPortalArea, signedIn } from '../../page-area.ts';
import { FormField, HtmlPage, Redirect, type WebRoutesOptions } from '../../web-options.ts';
import { ConfirmMemberPage, TeamPage, type TeamPageProps } from './team-page.tsx';

const NOT_ADMIN = 'Only an administrator of the portal can change the team.';
const Query = Type.Object({ done: FormField(32) });
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 20 }) });
const InviteBody = Type.Object({
  csrf: FormField(100),
  email: FormField(1000),
  role: FormField(20),
});
const RoleBody = Type.Object({ csrf: FormField(100), role: FormField(20) });
const ConfirmBody = Type.Object({ csrf: FormField(100), confirm: FormField(10) });
const AvailabilityBody = Type.Object({ csrf: FormField(100), availability: FormField(20) });
const Responses = { 200: HtmlPage, 303: Redirect, 400: HtmlPage, 403: HtmlPage, 404: HtmlPage };

type IdRequest = FastifyRequest<{ Params: Static<typeof IdParams> }>;

const contextOf = (session: WebSession, request: FastifyRequest) => ({
  actor: { type: 'user' as const, id: String(session.userId) },
  requestId: request.id,
});

/** A member id of the path: digits, else no member (404, as for another portal's). */
function memberIdOf(request: IdRequest): number {
  const raw = request.params.id;
  const id = /^\d{1,10}$/.test(raw) ? Number(raw) : 0;
  if (id < 1 || id > 2_147_483_647) throw new UsageError('No such member.', 'not_found');
  return id;
}

/** The page of the signed-in member, and the wrapper of an administrator's change. */
function teamKit(opts: WebRoutesOptions) {
  const { team } = opts;
  async function render(
    reply: FastifyReply,
    session: WebSession,
    extra: Partial<TeamPageProps> = {},
    status = 200,
  ) {
    return sendPage(
      reply,
      <TeamPage
        email={session.email}
        csrfToken={session.csrfToken}
        userId={session.userId}
        isAdmin={session.isAdmin}
        availability={session.availability}
        members={await team.listMembers(session.portalId)}
        {...extra}
      />,
      status,
    );
  }

  /**
   * An administrator's change: an agent gets the 403 page; a refusal of the rules the page with
   * its reason (400, or 404 for no such member); anything else is rethrown.
   */
  const adminChange =
    <R extends FastifyRequest>(
      run: (session: WebSession, request: R, reply: FastifyReply) => Promise<unknown>,
    ) =>
    async (request: R, reply: FastifyReply) => {
      const session = signedIn(request);
      if (!session.isAdmin) return sendNotAllowed(reply, session, NOT_ADMIN);
      try {
        return await run(session, request, reply);
      } catch (err) {
        if (!(err instanceof UsageError)) throw err;
        const typed = request.body as Static<typeof InviteBody>;
        const form =
          request.url === '/settings/team/invite'
            ? { form: { email: typed.email ?? '', role: typed.role ?? '' } }
            : {};
        return render(
          reply,
          session,
          { error: err.message, ...form },
          err.code === 'not_found' ? 404 : 400,
        );
      }
    };

  return { render, adminChange };
}

type TeamKit = ReturnType<typeof teamKit>;

/** Disable and remove: each a confirmation step (GET) and the form that does it (POST). */
function confirmedChanges(app: FastifyInstance, team: WebRoutesOptions['team'], kit: TeamKit) {
  const { adminChange } = kit;
  for (const action of ['disable', 'remove'] as const) {
    // The confirmation step: what will happen, and the one form that does it.
    app.get<{ Params: Static<typeof IdParams> }>(
      `/settings/team/:id/${action}`,
      { schema: { params: IdParams, response: Responses } },
      adminChange(async (session, request: IdRequest, reply) => {
        const id = memberIdOf(request);
        const member = (await team.listMembers(session.portalId)).find((m) => m.userId === id);
        if (!member) throw new UsageError('No such member.', 'not_found');
        return sendPage(
          reply,
          <ConfirmMemberPage
            email={session.email}
            csrfToken={session.csrfToken}
            member={member}
            action={action}
          />,
        );
      }),
    );

    app.post<{ Params: Static<typeof IdParams> }>(
      `/settings/team/:id/${action}`,
      { schema: { params: IdParams, body: ConfirmBody, response: Responses } },
      adminChange(async (session, request: IdRequest, reply) => {
        // Unconfirmed: to the confirmation step first, which says whether the member exists.
        if ((request.body as Static<typeof ConfirmBody>).confirm !== 'yes')
          return reply.redirect(
            `/settings/team/${encodeURIComponent(request.params.id)}/${action}`,
            303,
          );
        const userId = memberIdOf(request);
        const input = { portalId: session.portalId, userId, ...contextOf(session, request) };
        await (action === 'disable' ? team.disable(input) : team.remove(input));
        return reply.redirect(
          `/settings/team?done=${action === 'disable' ? 'member_disabled' : 'member_removed'}`,
          303,
        );
      }),
    );
  }
}

export async function teamPages(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const { sessions, team } = opts;
  guardPortalArea(app, sessions, { home: '/settings/team' });
  const kit = teamKit(opts);
  const { render, adminChange } = kit;
  confirmedChanges(app, team, kit);

  app.get<{ Querystring: Static<typeof Query> }>(
    '/settings/team',
    { schema: { querystring: Query, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const session = signedIn(request);
      const flash = flashOf(request.query);
      if (flash?.key === 'member_invited' && session.isAdmin) {
        const stashed = await sessions.takeOnce(request);
        if (stashed) {
          const newInvitation = JSON.parse(stashed) as TeamPageProps['newInvitation'];
          return render(reply, session, { newInvitation });
        }
      }
      return render(reply, session, { flash });
    },
  );

  app.post<{ Body: Static<typeof InviteBody> }>(
    '/settings/team/invite',
    { schema: { body: InviteBody, response: Responses } },
    adminChange(
      async (session, request: FastifyRequest<{ Body: Static<typeof InviteBody> }>, reply) => {
        const made = await team.invite({
          portalId: session.portalId,
          email: request.body.email ?? '',
          role: request.body.role ?? '',
          ...contextOf(session, request),
        });
        const shown = {
          email: made.email,
          link: `${opts.appBaseUrl}/invite/${made.token}`,
          expiresAt: made.expiresAt.toISOString(),
        };
        await sessions.stashOnce(request, JSON.stringify(shown));
        return reply.redirect('/settings/team?done=member_invited', 303);
      },
    ),
  );

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof RoleBody> }>(
    '/settings/team/:id/role',
    { schema: { params: IdParams, body: RoleBody, response: Responses } },
    adminChange(async (session, request: IdRequest, reply) => {
      await team.setRole({
        portalId: session.portalId,
        userId: memberIdOf(request),
        role: (request.body as Static<typeof RoleBody>).role ?? '',
        ...contextOf(session, request),
      });
      return reply.redirect('/settings/team?done=member_role', 303);
    }),
  );

  app.post<{ Params: Static<typeof IdParams> }>(
    '/settings/team/:id/enable',
    { schema: { params: IdParams, body: ConfirmBody, response: Responses } },
    adminChange(async (session, request: IdRequest, reply) => {
      await team.enable({
        portalId: session.portalId,
        userId: memberIdOf(request),
        ...contextOf(session, request),
      });
      return reply.redirect('/settings/team?done=member_enabled', 303);
    }),
  );

  app.post<{ Body: Static<typeof AvailabilityBody> }>(
    '/settings/team/availability',
    { schema: { body: AvailabilityBody, response: Responses } },
    async (request, reply) => {
      const session = signedIn(request);
      try {
        await team.setAvailability({
          portalId: session.portalId,
          userId: session.userId,
          availability: request.body.availability ?? '',
        });
      } catch (err) {
        if (!(err instanceof UsageError)) throw err;
        return render(reply, session, { error: err.message }, 400);
      }
      return reply.redirect('/settings/team?done=availability', 303);
    },
  );
}
