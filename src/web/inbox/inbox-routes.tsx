/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/inbox` for signed-in users: the portal's conversations, and `/inbox/{conversationId}` with
 * the thread and its reply box. The two panes alone, for `/assets/inbox.js`:
 * `/inbox/fragments/list` and `/inbox/{conversationId}/fragments/thread` (HTML fragments, no
 * layout). Every GET only reads: marking an opened conversation read (when the portal's
 * `autoMarkRead` is on) is the POST `/inbox/{conversationId}/read`, which the page's script sends
 * once the thread is shown. A conversation of another portal, or an id that is none, is a 404
 * page.
 *
 * @see docs/messaging.md "Inbox"
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { renderToString } from 'preact-render-to-string';
import { Type, type Static } from 'typebox';
import { sendNotFoundPage } from '../../browser/error-pages.tsx';
import { sendPage } from '../../browser/render.ts';
import type { WebSession } from '../../browser/session-store.ts';
import { MESSAGE_ID } from './inbox-compose.ts';
import { quoteOf, replySource, replyView } from './inbox-reply.ts';
import { windowWords, type InboxConversation } from './inbox-view.ts';
import { ConversationsPane, InboxPage, ThreadPane } from './inbox-page.tsx';
import type { ReplyView } from './inbox-reply-box.tsx';
import { signedIn, type PageRouteRules } from '../page-area.ts';
import { FormField, HtmlPage, Redirect, type WebRoutesOptions } from '../web-options.ts';

const ReadForm = Type.Object({ csrf: FormField(200) });

/** Conversations per page of the list; messages per page of a thread. */
export const LIST_SIZE = 30;
export const THREAD_SIZE = 50;
const CONVERSATION_ID = /^cnv_[0-9A-Za-z]{1,60}$/;

const Params = Type.Object({ conversationId: Type.String({ maxLength: 100 }) });
const ListQuery = Type.Object({ cursor: FormField(400), current: FormField(100) });
const ThreadQuery = Type.Object({
  compose: FormField(64),
  older: FormField(400),
  /** A message to quote in the reply (`msg_…`). */
  quote: FormField(100),
});
type ThreadQueryT = Static<typeof ThreadQuery>;
const PAGE = { 200: HtmlPage, 302: Redirect, 400: HtmlPage, 404: HtmlPage };

/** A conversation's form: sign-in brings the visitor back to the conversation. */
export const CONVERSATION_FORM: { page: PageRouteRules } = {
  page: {
    back: (request) =>
      `/inbox/${encodeURIComponent((request.params as Static<typeof Params>).conversationId)}`,
  },
};
/** Fetched by `/assets/inbox.js`: 401 without a session, never a redirect. */
const FRAGMENT = { page: { fragment: true } } as const;

const signedInOf = (s: WebSession) => ({ email: s.email, csrfToken: s.csrfToken });

/** The portal's conversation `id`, or null (malformed, unknown or another portal's). */
export async function conversationOf(
  opts: WebRoutesOptions,
  portalId: number,
  id: string,
): Promise<InboxConversation | null> {
  if (!CONVERSATION_ID.test(id)) return null;
  return opts.inbox.conversation(portalId, id);
}

/**
 * Mark the opened conversation read, when the portal's `autoMarkRead` is on; a failure is logged
 * (by kind) and never shown.
 */
async function markRead(
  opts: WebRoutesOptions,
  request: FastifyRequest,
  portalId: number,
  c: InboxConversation,
) {
  if (!opts.inbox.markReadOnOpen) return;
  try {
    await opts.inbox.markReadOnOpen(portalId, c);
  } catch (err) {
    request.log.warn({ err }, '/inbox: marking read on open failed');
  }
}

async function threadOf(
  opts: WebRoutesOptions,
  portalId: number,
  c: InboxConversation,
  older: string | undefined,
) {
  const page = await opts.inbox.messages(portalId, c.id, { limit: THREAD_SIZE, cursor: older });
  const olderHref = page.nextCursor
    ? `/inbox/${c.id}?older=${encodeURIComponent(page.nextCursor)}`
    : null;
  return { messages: page.items, olderHref };
}

/**
 * Render the inbox for the session: the list, and the open conversation (`open`) with its
 * reply box: a fresh one for the query's template choice, or the one a refused reply gives back.
 */
export async function renderInbox(
  opts: WebRoutesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  session: WebSession,
  open: { conversation: InboxConversation; query: ThreadQueryT; reply?: ReplyView } | null,
  status = 200,
): Promise<FastifyReply> {
  const now = new Date();
  const portalId = session.portalId;
  const list = await opts.inbox.conversations(portalId, { limit: LIST_SIZE });
  let view = null;
  if (open) {
    const c = open.conversation;
    const windowOpen = windowWords(c.windowExpiresAt, now).open;
    const [thread, box] = await Promise.all([
      threadOf(opts, portalId, c, open.query.older),
      open.reply ?? freshBox(opts, request, portalId, c, windowOpen, open.query),
    ]);
    view = { conversation: c, ...thread, reply: box };
  }
  return sendPage(
    reply,
    <InboxPage signedIn={signedInOf(session)} now={now} list={list} open={view} />,
    status,
  );
}

/** A new reply box: the query's choice (a template, a mode) and quote. */
async function freshBox(
  opts: WebRoutesOptions,
  request: FastifyRequest,
  portalId: number,
  c: InboxConversation,
  windowOpen: boolean,
  query: ThreadQueryT,
): Promise<ReplyView> {
  const [source, quote] = await Promise.all([
    replySource(opts, portalId, c, windowOpen, request.log),
    query.quote && MESSAGE_ID.test(query.quote)
      ? quoteOf(opts, portalId, c, query.quote)
      : undefined,
  ]);
  return replyView(c, windowOpen, source, query.compose, {
    uploads: !!opts.messaging.upload,
    quote,
  });
}

/** Send an HTML fragment (no layout), never cached. */
function sendFragment(reply: FastifyReply, html: string): FastifyReply {
  return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html);
}

export async function inboxPages(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/inbox',
    { schema: { querystring: ListQuery, response: PAGE } },
    async (request, reply) => {
      const session = signedIn(request);
      const now = new Date();
      const list = await opts.inbox.conversations(session.portalId, {
        limit: LIST_SIZE,
        cursor: request.query.cursor || undefined,
      });
      return sendPage(
        reply,
        <InboxPage signedIn={signedInOf(session)} now={now} list={list} open={null} />,
      );
    },
  );

  app.get<{ Params: Static<typeof Params>; Querystring: ThreadQueryT }>(
    '/inbox/:conversationId',
    { schema: { params: Params, querystring: ThreadQuery, response: PAGE } },
    async (request, reply) => {
      const id = request.params.conversationId;
      const session = signedIn(request);
      const conversation = await conversationOf(opts, session.portalId, id);
      if (!conversation) return sendNotFoundPage(reply);
      return renderInbox(opts, request, reply, session, { conversation, query: request.query });
    },
  );

  // The page's script posts this once it shows a thread with unread messages (its form is
  // hidden): reads never write, so a prefetch or a link checker never marks a message read.
  app.post<{ Params: Static<typeof Params>; Body: Static<typeof ReadForm> }>(
    '/inbox/:conversationId/read',
    {
      config: CONVERSATION_FORM,
      schema: {
        params: Params,
        body: ReadForm,
        response: { 302: Redirect, 303: Redirect, 400: HtmlPage, 403: HtmlPage, 404: HtmlPage },
      },
    },
    async (request, reply) => {
      const id = request.params.conversationId;
      const session = signedIn(request);
      const c = await conversationOf(opts, session.portalId, id);
      if (!c) return sendNotFoundPage(reply);
      await markRead(opts, request, session.portalId, c);
      return reply.redirect(`/inbox/${c.id}`, 303);
    },
  );

  // The page's script posts this when the agent starts typing a reply (at most every 20 s):
  // the person sees the business typing. A failure is logged and never shown.
  // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/typing-indicators
  app.post<{ Params: Static<typeof Params>; Body: Static<typeof ReadForm> }>(
    '/inbox/:conversationId/typing',
    {
      schema: {
        params: Params,
        body: ReadForm,
        response: {
          204: Type.Null(),
          302: Redirect,
          303: Redirect,
          400: HtmlPage,
          403: HtmlPage,
          404: HtmlPage,
        },
      },
    },
    async (request, reply) => {
      const id = request.params.conversationId;
      const session = signedIn(request);
      const c = await conversationOf(opts, session.portalId, id);
      if (!c) return sendNotFoundPage(reply);
      try {
        await opts.inbox.showTyping?.(session.portalId, c);
      } catch (err) {
        request.log.warn({ err }, '/inbox: the typing indicator failed');
      }
      return reply.code(204).send(null);
    },
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/inbox/fragments/list',
    {
      config: FRAGMENT,
      schema: { querystring: ListQuery, response: { 200: HtmlPage, 401: HtmlPage } },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const list = await opts.inbox.conversations(session.portalId, { limit: LIST_SIZE });
      const current = request.query.current ?? null;
      return sendFragment(
        reply,
        renderToString(
          <ConversationsPane
            items={list.items}
            nextCursor={list.nextCursor}
            currentId={current}
            now={new Date()}
          />,
        ),
      );
    },
  );

  app.get<{ Params: Static<typeof Params> }>(
    '/inbox/:conversationId/fragments/thread',
    {
      config: FRAGMENT,
      schema: { params: Params, response: { 200: HtmlPage, 401: HtmlPage, 404: HtmlPage } },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const c = await conversationOf(opts, session.portalId, request.params.conversationId);
      if (!c) return sendNotFoundPage(reply);
      const thread = await threadOf(opts, session.portalId, c, undefined);
      return sendFragment(
        reply,
        renderToString(
          <ThreadPane
            conversation={c}
            {...thread}
            now={new Date()}
            csrfToken={session.csrfToken}
          />,
        ),
      );
    },
  );
}
