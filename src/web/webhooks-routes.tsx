/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/settings/webhooks`: the portal's outbound webhook endpoints and recent deliveries, for the
 * main administrator only (like connect and disconnect). Every change is a CSRF-checked form;
 * a new secret is answered in place (shown once), the rest redirect back with a notice.
 *
 * @see docs/webhooks.md
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { sendFormExpired, sendNotAllowed } from '../browser/refusal-pages.tsx';
import { sendPage } from '../browser/render.ts';
import type { WebSession } from '../browser/session-store.ts';
import { csrfOk, redirectToLogin } from '../browser/web-session.ts';
import { AppError } from '../platform/errors.ts';
import { WebhooksPage, type WebhooksPageProps } from './pages/webhooks-page.tsx';
import { FormField, HtmlPage, Redirect, sessionOr, type WebRoutesOptions } from './web-options.ts';

const NOT_ADMIN = 'Only the main administrator of the portal can manage webhooks.';
const Query = Type.Object({ done: FormField(32) });
const DONE: Record<string, string> = {
  removed: 'The endpoint is removed.',
  test: 'A webhook.test event is queued for the endpoint.',
  resent: 'The event is queued again (same webhook-id).',
  enabled: 'The endpoint is enabled.',
  threshold: 'The credit alert is saved.',
};
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const AddBody = Type.Object({
  csrf: FormField(100),
  url: FormField(2048),
  events: Type.Optional(
    Type.Union([
      Type.String({ maxLength: 64 }),
      Type.Array(Type.String({ maxLength: 64 }), { maxItems: 20 }),
    ]),
  ),
});
const ThresholdBody = Type.Object({ csrf: FormField(100), threshold: FormField(20) });
const CsrfOnly = Type.Object({ csrf: FormField(100) });
const PageResponses = { 200: HtmlPage, 303: Redirect, 400: HtmlPage, 403: HtmlPage, 404: HtmlPage };

type Render = (
  reply: FastifyReply,
  session: WebSession,
  extra?: Partial<WebhooksPageProps>,
  status?: number,
) => Promise<FastifyReply>;

type Change = (
  session: WebSession,
  request: FastifyRequest,
  reply: FastifyReply,
) => Promise<unknown>;

/** A change by the main administrator: session, CSRF and role checked; refusals shown. */
function changeBy(sessions: WebRoutesOptions['sessions'], render: Render) {
  return (run: Change) => async (request: FastifyRequest, reply: FastifyReply) => {
    const session = await sessions.read(request);
    if (!session) return redirectToLogin(reply, '/settings/webhooks', 303);
    if (!csrfOk(session, (request.body as { csrf?: string | undefined }).csrf)) {
      return sendFormExpired(reply, session);
    }
    if (!session.isMainAdmin) return sendNotAllowed(reply, session, NOT_ADMIN);
    try {
      return await run(session, request, reply);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      return render(reply, session, { error: err.message }, err.status === 404 ? 404 : 400);
    }
  };
}

const context = (session: WebSession, request: FastifyRequest) => ({
  actor: { type: 'user' as const, id: String(session.userId) },
  requestId: request.id,
});
const back = (reply: FastifyReply, done: string) =>
  reply.redirect(`/settings/webhooks?done=${done}`, 303);
const idOf = (request: FastifyRequest) => (request.params as Static<typeof IdParams>).id;

/** The forms that answer with a redirect back to the page and a notice. */
function simpleChanges(
  app: FastifyInstance,
  webhooks: WebRoutesOptions['webhooks'],
  change: ReturnType<typeof changeBy>,
): void {
  const simple: [string, string, Change][] = [
    [
      '/settings/webhooks/:id/remove',
      'removed',
      (s, r) => webhooks.removeEndpoint(s.portalId, idOf(r), context(s, r)),
    ],
    [
      '/settings/webhooks/:id/enable',
      'enabled',
      (s, r) => webhooks.enableEndpoint(s.portalId, idOf(r), context(s, r)),
    ],
    ['/settings/webhooks/:id/test', 'test', (s, r) => webhooks.sendTestEvent(s.portalId, idOf(r))],
    [
      '/settings/webhooks/deliveries/:id/resend',
      'resent',
      (s, r) => webhooks.resend(s.portalId, idOf(r)),
    ],
  ];
  for (const [url, done, run] of simple) {
    app.post(
      url,
      { schema: { params: IdParams, body: CsrfOnly, response: PageResponses } },
      change(async (session, request, reply) => {
        await run(session, request, reply);
        return back(reply, done);
      }),
    );
  }
  app.post(
    '/settings/webhooks/credit-threshold',
    { schema: { body: ThresholdBody, response: PageResponses } },
    change(async (session, request, reply) => {
      const raw = (request.body as Static<typeof ThresholdBody>).threshold?.trim() ?? '';
      if (raw !== '' && !/^\d{1,15}$/.test(raw)) {
        throw new AppError('invalid_request', 'The threshold is a whole number of minor units.');
      }
      await webhooks.setCreditLowThreshold(
        session.portalId,
        raw === '' ? null : Number(raw),
        context(session, request),
      );
      return back(reply, 'threshold');
    }),
  );
}

export async function webhooksPages(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const { sessions, webhooks } = opts;

  const render: Render = async (reply, session, extra = {}, status = 200) => {
    const [endpoints, deliveries, creditLowThreshold] = await Promise.all([
      webhooks.listEndpoints(session.portalId),
      webhooks.recentDeliveries(session.portalId, { limit: 50 }),
      webhooks.creditLowThreshold(session.portalId),
    ]);
    return sendPage(
      reply,
      <WebhooksPage
        email={session.email}
        csrfToken={session.csrfToken}
        endpoints={endpoints}
        deliveries={deliveries}
        creditLowThreshold={creditLowThreshold}
        {...extra}
      />,
      status,
    );
  };
  const change = changeBy(sessions, render);

  app.get<{ Querystring: Static<typeof Query> }>(
    '/settings/webhooks',
    { schema: { querystring: Query, response: { 200: HtmlPage, 302: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      const session = await sessionOr(sessions, request, reply, '/settings/webhooks');
      if (!session) return reply;
      if (!session.isMainAdmin) return sendNotAllowed(reply, session, NOT_ADMIN);
      const done = request.query.done;
      const notice = done && Object.hasOwn(DONE, done) ? DONE[done] : undefined;
      return render(reply, session, notice ? { notice } : {});
    },
  );

  app.post(
    '/settings/webhooks',
    { schema: { body: AddBody, response: PageResponses } },
    change(async (session, request, reply) => {
      const { url, events } = request.body as Static<typeof AddBody>;
      const added = await webhooks.addEndpoint(
        session.portalId,
        { url: url ?? '', eventTypes: typeof events === 'string' ? [events] : (events ?? []) },
        context(session, request),
      );
      // The secret exists only in this answer; the spent CSRF token stops a reload re-adding.
      const csrfToken = await sessions.store.rotateCsrf(session.idHash);
      return render(
        reply,
        { ...session, csrfToken },
        {
          newSecret: { endpointId: added.endpoint.id, secret: added.secret },
          ...(added.notice && { notice: added.notice }),
        },
      );
    }),
  );

  app.post(
    '/settings/webhooks/:id/rotate',
    { schema: { params: IdParams, body: CsrfOnly, response: PageResponses } },
    change(async (session, request, reply) => {
      const id = idOf(request);
      const rotated = await webhooks.rotateSecret(session.portalId, id, context(session, request));
      const csrfToken = await sessions.store.rotateCsrf(session.idHash);
      return render(
        reply,
        { ...session, csrfToken },
        {
          newSecret: {
            endpointId: id,
            secret: rotated.secret,
            until: rotated.previousSecretValidUntil,
          },
        },
      );
    }),
  );

  simpleChanges(app, webhooks, change);
}
