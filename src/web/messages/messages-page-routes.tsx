/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/messages` for signed-in users: reads each card's data on its own, so a provider failure
 * (or a messaging engine this server does not run) becomes a sentence on that card, never an
 * error page. Filters and the composer's choice come as plain GET forms; the composer's send
 * is `POST /messages/send` (messages-send-routes.tsx), which renders this page again when the
 * send is refused.
 *
 * @see docs/messaging.md
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { flashOf } from '../../browser/flash.tsx';
import { sendPage } from '../../browser/render.ts';
import type { WebSession } from '../../browser/session-store.ts';
import type { PhoneNumber } from '../../messaging/provider/provider-adapter.ts';
import { toAppError } from '../../platform/error-envelope.ts';
import {
  chosenTemplate,
  composerContacts,
  composerTemplates,
  newIdempotencyKey,
  type ComposerSource,
  type ComposerView,
} from '../message-composer.ts';
import { creditView, dailyCounts, messageLogPage } from './messages-page-data.ts';
import { lastDays } from './messages-page-chart.tsx';
import { MessagesPage, MESSAGE_STATUSES, type Card } from './messages-page.tsx';
import { signedIn } from '../page-area.ts';
import { FormField, HtmlPage, Redirect, type WebRoutesOptions } from '../web-options.ts';

const DATE = '^$|^\\d{4}-\\d{2}-\\d{2}$';
const Query = Type.Object({
  status: Type.Optional(
    Type.Union([Type.Literal(''), ...MESSAGE_STATUSES.map((s) => Type.Literal(s))]),
  ),
  to: FormField(40),
  since: Type.Optional(Type.String({ pattern: DATE })),
  until: Type.Optional(Type.String({ pattern: DATE })),
  cursor: FormField(400),
  /** The composer's choice: `text` or a template id. */
  compose: FormField(64),
  done: FormField(32),
  /** The message a `done=message_sent` flash links to (shown only when the log has it). */
  message: FormField(64),
});
export type MessagesQuery = Static<typeof Query>;
const PAGE_SIZE = 25;
const CHART_DAYS = 14;
const MESSAGE_ID = /^msg_[0-9A-Za-z]{1,60}$/;

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
      code: e.code,
      message: e.code === 'internal_error' ? `The ${what} could not be read.` : e.message,
    };
  }
}

/** What the composer reads: the numbers, then the account's templates and the contacts. */
export interface ComposerReads {
  numbers: Card<PhoneNumber[]>;
  source: ComposerSource;
}

/** The numbers card and the composer's source (templates and contacts read after numbers). */
export async function readComposer(
  opts: WebRoutesOptions,
  portalId: number,
  log: FastifyInstance['log'],
): Promise<ComposerReads> {
  const numbers = await card(() => opts.messaging.provider.numbers(portalId), log, 'numbers');
  if (!numbers.ok) {
    const source: ComposerSource =
      numbers.code === 'not_connected'
        ? { kind: 'not_connected' }
        : { kind: 'unavailable', message: numbers.message };
    return { numbers, source };
  }
  const [templates, contacts] = await Promise.all([
    card(() => opts.messaging.provider.templates(portalId), log, 'approved templates'),
    opts.contacts.listContacts({ portalId }, { limit: 100 }),
  ]);
  if (!templates.ok)
    return { numbers, source: { kind: 'unavailable', message: templates.message } };
  return {
    numbers,
    source: {
      kind: 'ready',
      numbers: numbers.value,
      templates: composerTemplates(templates.value, numbers.value),
      contacts: composerContacts(contacts.items),
    },
  };
}

/** A fresh composer for the query's choice (the first template by default). */
function freshComposer(source: ComposerSource, choice: string | undefined): ComposerView {
  const templates = source.kind === 'ready' ? source.templates : [];
  // A template id the account no longer offers: back to the default choice.
  const chosen = chosenTemplate(templates, choice);
  return {
    source,
    template: chosen === undefined ? (templates[0] ?? null) : chosen,
    form: { parameters: [] },
    errors: {},
    idempotencyKey: newIdempotencyKey(),
  };
}

/**
 * Render `/messages` for the session: every card read, the composer either fresh (the
 * query's choice) or the one a refused send gives back (`composer`, with the reads it made).
 */
export async function renderMessagesPage(
  opts: WebRoutesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  session: WebSession,
  q: MessagesQuery,
  refused?: { reads: ComposerReads; composer: ComposerView; status: number },
): Promise<FastifyReply> {
  const { messaging } = opts;
  const filters = {
    status: q.status || undefined,
    to: q.to?.trim() || undefined,
    since: q.since || undefined,
    until: q.until || undefined,
  };
  const portalId = session.portalId;
  const log = messaging.log;
  const [reads, templates, drafts, logCard, chart, credit] = await Promise.all([
    refused?.reads ?? readComposer(opts, portalId, request.log),
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
      async () => lastDays(await dailyCounts(log, portalId, CHART_DAYS), new Date(), CHART_DAYS),
      request.log,
      'chart',
    ),
    card(() => creditView(log, portalId), request.log, 'credit'),
  ]);
  const flash = flashOf(q);
  const sent = flash?.key === 'message_sent' && q.message && MESSAGE_ID.test(q.message);
  const shown = sent && logCard.ok && logCard.value.items.some((m) => m.id === q.message);
  return sendPage(
    reply,
    <MessagesPage
      signedIn={{ email: session.email, csrfToken: session.csrfToken }}
      filters={filters}
      log={logCard}
      chart={chart}
      credit={credit}
      numbers={reads.numbers}
      templates={templates}
      drafts={drafts.items}
      composer={refused?.composer ?? freshComposer(reads.source, q.compose)}
      flash={flash?.key === 'message_sent' ? flash : null}
      sentMessageId={shown ? q.message : undefined}
    />,
    refused?.status ?? 200,
  );
}

export async function messagesPages(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  app.get<{ Querystring: MessagesQuery }>(
    '/messages',
    { schema: { querystring: Query, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      return renderMessagesPage(opts, request, reply, signedIn(request), request.query);
    },
  );
}
