/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/settings/webhooks`: the portal's outbound webhook endpoints and recent deliveries, for the
 * administrators only (like connect and disconnect). Every change is a CSRF-checked form;
 * a new secret is shown once on the page the form redirects to, the rest redirect back with a
 * flash; removing an endpoint goes through a confirmation step.
 *
 * @see docs/webhooks.md
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { flashOf } from '../../../browser/flash.tsx';
import { sendPage } from '../../../browser/render.ts';
import type { WebSession } from '../../../browser/session-store.ts';
import { AppError } from '../../../platform/errors.ts';
import {
  deliveryCursor,
  DELIVERY_STATUSES,
  type DeliveryStatus,
} from '../../../webhooks/delivery-history.ts';
import { ConfirmRemovePage, WebhooksPage, type WebhooksPageProps } from './webhooks-page.tsx';
import {
  FormField,
  HtmlPage,
  adminChange,
  type AdminChange,
  Redirect,
  type WebRoutesOptions,
} from '../../web-options.ts';
import { guardPortalArea, signedIn } from '../../page-area.ts';

const NOT_ADMIN = 'Only an administrator of the portal can manage webhooks.';
const Query = Type.Object({
  done: FormField(32),
  events: FormField(12),
  status: FormField(16),
  after: FormField(200),
});
/** Deliveries per page of the history. */
const DELIVERIES_PAGE = 50;
const ReplayBody = Type.Object({
  csrf: FormField(100),
  since: FormField(40),
  failedOnly: FormField(10),
});
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
const ConfirmBody = Type.Object({ csrf: FormField(100), confirm: FormField(10) });
const PageResponses = { 200: HtmlPage, 303: Redirect, 400: HtmlPage, 403: HtmlPage, 404: HtmlPage };

/** A secret shown once on the next page, kept in the session meanwhile. */
type ShownSecret = NonNullable<WebhooksPageProps['newSecret']> & { notice?: string | undefined };

type Render = (
  reply: FastifyReply,
  session: WebSession,
  extra?: Partial<WebhooksPageProps>,
  status?: number,
) => Promise<FastifyReply>;

/** A change by an administrator; a refusal shows the page with its reason. */
function changeBy(render: Render) {
  return adminChange((err, session, request, reply) => {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    return render(reply, session, formError(err, request), err.status === 404 ? 404 : 400);
  });
}

/** The form's values as typed, and the error beside the field it concerns (else on top). */
function formError(err: AppError, request: FastifyRequest): Partial<WebhooksPageProps> {
  const body = request.body as Partial<Static<typeof AddBody>> & { threshold?: string };
  const url = request.url.split('?')[0];
  if (url === '/settings/webhooks') {
    const field = err.details?.[0]?.field;
    const events = typeof body.events === 'string' ? [body.events] : (body.events ?? []);
    return {
      addForm: {
        url: body.url ?? '',
        events,
        ...(field === 'eventTypes' ? { eventsError: err.message } : { urlError: err.message }),
      },
    };
  }
  if (url === '/settings/webhooks/credit-threshold') {
    return { thresholdForm: { value: body.threshold ?? '', error: err.message } };
  }
  return { error: err.message };
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
  const simple: [string, string, AdminChange][] = [
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
    '/settings/webhooks/:id/remove',
    { schema: { params: IdParams, body: ConfirmBody, response: PageResponses } },
    change(async (session, request, reply) => {
      const id = idOf(request);
      if ((request.body as Static<typeof ConfirmBody>).confirm !== 'yes') {
        return reply.redirect(`/settings/webhooks/${encodeURIComponent(id)}/remove`, 303);
      }
      await webhooks.removeEndpoint(session.portalId, id, context(session, request));
      return back(reply, 'removed');
    }),
  );
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

/** The history's status filter from the query: one of the delivery states, else all. */
const statusOf = (raw: string | undefined): DeliveryStatus | undefined =>
  DELIVERY_STATUSES.find((s) => s === raw);

/**
 * Renders the webhooks page of a session's portal: its endpoints, replays, threshold and a page
 * of its delivery history (`history`: the status filter and the cursor of the page).
 */
function pageRenderer(webhooks: WebRoutesOptions['webhooks']): Render {
  return async (reply, session, extra = {}, status = 200) => {
    const history = extra.history ?? { status: undefined, after: undefined };
    const [endpoints, deliveries, replays, creditLowThreshold] = await Promise.all([
      webhooks.listEndpoints(session.portalId),
      webhooks.portalDeliveries(session.portalId, {
        limit: DELIVERIES_PAGE,
        status: history.status,
        cursor: history.after,
      }),
      webhooks.recentReplays(session.portalId, 10),
      webhooks.creditLowThreshold(session.portalId),
    ]);
    return sendPage(
      reply,
      <WebhooksPage
        email={session.email}
        csrfToken={session.csrfToken}
        endpoints={endpoints}
        deliveries={deliveries.items}
        replays={replays}
        creditLowThreshold={creditLowThreshold}
        {...extra}
        history={{ ...history, nextCursor: deliveries.nextCursor }}
      />,
      status,
    );
  };
}

export async function webhooksPages(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const { sessions, webhooks } = opts;
  guardPortalArea(app, sessions, { home: '/settings/webhooks', adminOnly: NOT_ADMIN });

  const render = pageRenderer(webhooks);
  const change = changeBy(render);

  app.get<{ Querystring: Static<typeof Query> }>(
    '/settings/webhooks',
    { schema: { querystring: Query, response: { 200: HtmlPage, 302: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      const session = signedIn(request);
      const flash = flashOf(request.query);
      const history = { status: statusOf(request.query.status), after: request.query.after };
      if (history.after !== undefined || history.status !== undefined) {
        try {
          deliveryCursor.after(history.after);
        } catch {
          return render(
            reply,
            session,
            { error: 'This page of deliveries no longer exists.' },
            400,
          );
        }
        return render(reply, session, { flash, history });
      }
      if (flash?.key === 'webhook_added' || flash?.key === 'webhook_rotated') {
        const stashed = await sessions.takeOnce(request);
        const shown = stashed ? (JSON.parse(stashed) as ShownSecret) : null;
        if (shown) {
          const { notice, ...newSecret } = shown;
          return render(reply, session, { newSecret, ...(notice && { notice }) });
        }
      }
      return render(reply, session, { flash });
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/settings/webhooks/:id/remove',
    {
      config: { page: { back: '/settings/webhooks' } },
      schema: {
        params: IdParams,
        response: { 200: HtmlPage, 302: Redirect, 403: HtmlPage, 404: HtmlPage },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const endpoints = await webhooks.listEndpoints(session.portalId);
      const endpoint = endpoints.find((e) => e.id === request.params.id);
      if (!endpoint)
        return render(reply, session, { error: 'No webhook endpoint with this id.' }, 404);
      return sendPage(
        reply,
        <ConfirmRemovePage
          email={session.email}
          csrfToken={session.csrfToken}
          endpoint={endpoint}
        />,
      );
    },
  );

  // A new secret travels POST → 303 → GET, kept server-side in the session for one read (never
  // in a URL): a reload shows it no more and never "This form has expired".
  const showOnce = async (
    request: FastifyRequest,
    reply: FastifyReply,
    shown: ShownSecret,
    done: string,
  ) => {
    await sessions.stashOnce(request, JSON.stringify(shown));
    return back(reply, done);
  };

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
      return showOnce(
        request,
        reply,
        {
          endpointId: added.endpoint.id,
          secret: added.secret,
          ...(added.notice && { notice: added.notice }),
        },
        'webhook_added',
      );
    }),
  );

  app.post(
    '/settings/webhooks/:id/rotate',
    { schema: { params: IdParams, body: CsrfOnly, response: PageResponses } },
    change(async (session, request, reply) => {
      const id = idOf(request);
      const rotated = await webhooks.rotateSecret(session.portalId, id, context(session, request));
      return showOnce(
        request,
        reply,
        { endpointId: id, secret: rotated.secret, until: rotated.previousSecretValidUntil },
        'webhook_rotated',
      );
    }),
  );

  // "Replay since…": the endpoint's events since a time (UTC) queued again, optionally only
  // those that did not reach it; the page then shows the replay's progress.
  app.post(
    '/settings/webhooks/:id/replay',
    { schema: { params: IdParams, body: ReplayBody, response: PageResponses } },
    change(async (session, request, reply) => {
      const body = request.body as Static<typeof ReplayBody>;
      const since = body.since?.trim() ?? '';
      if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(since)) {
        throw new AppError('invalid_request', 'Give the time to replay from (UTC).');
      }
      const replay = await webhooks.replay(
        session.portalId,
        idOf(request),
        { since: `${since}Z`, failedOnly: body.failedOnly === 'yes' },
        context(session, request),
      );
      return reply.redirect(
        `/settings/webhooks?done=replay_started&events=${replay.eventCount}#replays`,
        303,
      );
    }),
  );

  simpleChanges(app, webhooks, change);
}
