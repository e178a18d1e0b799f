/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/messages` for signed-in users: reads each card's data on its own, so a provider failure
 * (or a messaging engine this server does not run) becomes a sentence on that card, never an
 * error page. Filters come as a plain GET form; nothing here changes state.
 *
 * @see README.md "Messaging: numbers, templates and drafts"
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { sendPage } from '../browser/render.ts';
import { toAppError } from '../platform/error-envelope.ts';
import { creditView, dailyCounts, messageLogPage } from './messages-page-data.ts';
import { lastDays } from './pages/messages-page-chart.tsx';
import { MessagesPage, MESSAGE_STATUSES, type Card } from './pages/messages-page.tsx';
import { FormField, HtmlPage, Redirect, sessionOr, type WebRoutesOptions } from './web-options.ts';

const DATE = '^$|^\\d{4}-\\d{2}-\\d{2}$';
const Query = Type.Object({
  status: Type.Optional(
    Type.Union([Type.Literal(''), ...MESSAGE_STATUSES.map((s) => Type.Literal(s))]),
  ),
  to: FormField(40),
  since: Type.Optional(Type.String({ pattern: DATE })),
  until: Type.Optional(Type.String({ pattern: DATE })),
  cursor: FormField(400),
});
const PAGE_SIZE = 25;
const CHART_DAYS = 14;

/** Run a card's read; an expected failure becomes its sentence (logged by kind, no data). */
async function card<T>(
  read: () => Promise<T>,
  log: FastifyInstance['log'],
  what: string,
): Promise<Card<T>> {
  try {
    return { ok: true, value: await read() };
  } catch (err) {
    const e = toAppError(err);
    if (e.code === 'internal_error') log.error({ err }, `/messages: ${what} failed`);
    else log.warn({ code: e.code }, `/messages: ${what} unavailable`);
    return {
      ok: false,
      message: e.code === 'internal_error' ? `The ${what} could not be read.` : e.message,
    };
  }
}

export async function messagesPages(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const { sessions, messaging } = opts;
  app.get<{ Querystring: Static<typeof Query> }>(
    '/messages',
    { schema: { querystring: Query, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const session = await sessionOr(sessions, request, reply, '/messages');
      if (!session) return reply;
      const q = request.query;
      const filters = {
        status: q.status || undefined,
        to: q.to?.trim() || undefined,
        since: q.since || undefined,
        until: q.until || undefined,
      };
      const portalId = session.portalId;
      const log = messaging.log;
      const [numbers, templates, drafts, logCard, chart, credit] = await Promise.all([
        card(() => messaging.provider.numbers(portalId), request.log, 'numbers'),
        card(
          async () => (await messaging.templates.listTemplates(portalId, { limit: 50 })).items,
          request.log,
          'templates',
        ),
        messaging.drafts.listDrafts(session, { limit: 10 }),
        card(
          () =>
            messageLogPage(log, portalId, filters, {
              cursor: q.cursor || undefined,
              limit: PAGE_SIZE,
            }),
          request.log,
          'message log',
        ),
        card(
          async () =>
            lastDays(await dailyCounts(log, portalId, CHART_DAYS), new Date(), CHART_DAYS),
          request.log,
          'chart',
        ),
        card(() => creditView(log, portalId), request.log, 'credit'),
      ]);
      return sendPage(
        reply,
        <MessagesPage
          signedIn={{ email: session.email, csrfToken: session.csrfToken }}
          filters={filters}
          log={logCard}
          chart={chart}
          credit={credit}
          numbers={numbers}
          templates={templates}
          drafts={drafts.items}
        />,
      );
    },
  );
}
