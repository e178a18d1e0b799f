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
import { filterOf, listQueryString, updateOf, type InboxListQuery } from './inbox-work.tsx';
import { NOTES_SHOWN, noteError, type NoteFormView } from './inbox-notes.tsx';
import { NOTE_MAX } from '../../messaging/conversations/conversations-schemas.ts';
import { MessagePage } from '../../browser/message-page.tsx';
import { toAppError } from '../../platform/error-envelope.ts';
import { ConversationsPane, InboxPage, ThreadPane } from './inbox-page.tsx';
import type { ReplyView } from './inbox-reply-box.tsx';
import { signedIn, type PageRouteRules } from '../page-area.ts';
import { FormField, HtmlPage, Redirect, type WebRoutesOptions } from '../web-options.ts';

const ReadForm = Type.Object({ csrf: FormField(200) });
const WorkForm = Type.Object({
  csrf: FormField(200),
  status: FormField(20),
  assignee: FormField(20),
  labels: FormField(2000),
});
/** A note's form; the body is bounded here a little above the API's limit and checked after. */
const NoteFormBody = Type.Object({ csrf: FormField(200), body: FormField(NOTE_MAX * 4) });

/** Conversations per page of the list; messages per page of a thread. */
export const LIST_SIZE = 30;
export const THREAD_SIZE = 50;
const CONVERSATION_ID = /^cnv_[0-9A-Za-z]{1,60}$/;

const Params = Type.Object({ conversationId: Type.String({ maxLength: 100 }) });
/** The list's filters (inbox-work.tsx). */
const FILTERS = { view: FormField(20), status: FormField(20), label: FormField(100) };
const ListQuery = Type.Object({ cursor: FormField(400), current: FormField(100), ...FILTERS });
const ThreadQuery = Type.Object({
  ...FILTERS,
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
  session: Pick<WebSession, 'portalId' | 'userId'>,
  id: string,
): Promise<InboxConversation | null> {
  if (!CONVERSATION_ID.test(id)) return null;
  return opts.inbox.conversation(session.portalId, id, session.userId);
}

/**
 * Mark the opened conversation read for the member who opened it, and at the provider when the
 * portal's `autoMarkRead` is on; a failure at the provider is logged (by kind) and never shown.
 */
async function markRead(
  opts: WebRoutesOptions,
  request: FastifyRequest,
  session: WebSession,
  c: InboxConversation,
) {
  await opts.inbox.markReadBy(session, c.id);
  if (!opts.inbox.markReadOnOpen) return;
  try {
    await opts.inbox.markReadOnOpen(session.portalId, c);
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
  const [page, notes] = await Promise.all([
    opts.inbox.messages(portalId, c.id, { limit: THREAD_SIZE, cursor: older }),
    opts.inbox.notes(portalId, c.id, NOTES_SHOWN),
  ]);
  const olderHref = page.nextCursor
    ? `/inbox/${c.id}?older=${encodeURIComponent(page.nextCursor)}`
    : null;
  return { messages: page.items, notes, olderHref };
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
  open: {
    conversation: InboxConversation;
    query: ThreadQueryT;
    reply?: ReplyView;
    /** A refused note, shown again with its error. */
    note?: NoteFormView;
  } | null,
  status = 200,
): Promise<FastifyReply> {
  const now = new Date();
  const portalId = session.portalId;
  const listQuery: InboxListQuery = open?.query ?? {};
  const [list, members] = await Promise.all([
    opts.inbox.conversations(
      portalId,
      { limit: LIST_SIZE },
      session.userId,
      filterOf(listQuery, session.userId),
    ),
    opts.inbox.members(portalId),
  ]);
  let view = null;
  if (open) {
    const c = open.conversation;
    const windowOpen = windowWords(c.windowExpiresAt, now).open;
    const [thread, box] = await Promise.all([
      threadOf(opts, portalId, c, open.query.older),
      open.reply ?? freshBox(opts, request, portalId, c, windowOpen, open.query),
    ]);
    view = { conversation: c, ...thread, reply: box, note: open.note };
  }
  return sendPage(
    reply,
    <InboxPage
      signedIn={signedInOf(session)}
      now={now}
      list={list}
      open={view}
      members={members}
      listQuery={listQuery}
    />,
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

/** The list for the session's member: their filters and their own unread counts. */
function listOf(
  opts: WebRoutesOptions,
  session: WebSession,
  query: InboxListQuery,
  cursor: string | undefined,
) {
  return opts.inbox.conversations(
    session.portalId,
    { limit: LIST_SIZE, cursor },
    session.userId,
    filterOf(query, session.userId),
  );
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
      const [list, members] = await Promise.all([
        listOf(opts, session, request.query, request.query.cursor || undefined),
        opts.inbox.members(session.portalId),
      ]);
      return sendPage(
        reply,
        <InboxPage
          signedIn={signedInOf(session)}
          now={now}
          list={list}
          open={null}
          members={members}
          listQuery={request.query}
        />,
      );
    },
  );

  app.get<{ Params: Static<typeof Params>; Querystring: ThreadQueryT }>(
    '/inbox/:conversationId',
    { schema: { params: Params, querystring: ThreadQuery, response: PAGE } },
    async (request, reply) => {
      const id = request.params.conversationId;
      const session = signedIn(request);
      const conversation = await conversationOf(opts, session, id);
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
      const c = await conversationOf(opts, session, id);
      if (!c) return sendNotFoundPage(reply);
      await markRead(opts, request, session, c);
      return reply.redirect(`/inbox/${c.id}`, 303);
    },
  );

  workRoute(app, opts);
  noteRoute(app, opts);

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
      const c = await conversationOf(opts, session, id);
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
      const [list, members] = await Promise.all([
        listOf(opts, session, request.query, undefined),
        opts.inbox.members(session.portalId),
      ]);
      const current = request.query.current ?? null;
      return sendFragment(
        reply,
        renderToString(
          <ConversationsPane
            items={list.items}
            nextCursor={list.nextCursor}
            currentId={current}
            now={new Date()}
            members={members}
            listQuery={listQueryString(request.query)}
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
      const c = await conversationOf(opts, session, request.params.conversationId);
      if (!c) return sendNotFoundPage(reply);
      const [thread, members] = await Promise.all([
        threadOf(opts, session.portalId, c, undefined),
        opts.inbox.members(session.portalId),
      ]);
      return sendFragment(
        reply,
        renderToString(
          <ThreadPane
            conversation={c}
            {...thread}
            now={new Date()}
            csrfToken={session.csrfToken}
            members={members}
          />,
        ),
      );
    },
  );
}

/** `POST /inbox/{conversationId}/work`: the thread's form (status or a snooze, assignee, labels). */
function workRoute(app: FastifyInstance, opts: WebRoutesOptions): void {
  // The thread's form: status (or a snooze), assignee and labels, through messaging's rules.
  app.post<{ Params: Static<typeof Params>; Body: Static<typeof WorkForm> }>(
    '/inbox/:conversationId/work',
    {
      config: CONVERSATION_FORM,
      schema: {
        params: Params,
        body: WorkForm,
        response: { 302: Redirect, 303: Redirect, 400: HtmlPage, 403: HtmlPage, 404: HtmlPage },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const c = await conversationOf(opts, session, request.params.conversationId);
      if (!c) return sendNotFoundPage(reply);
      const parsed = updateOf(request.body, new Date());
      let problem = 'error' in parsed ? parsed.error : null;
      if (!problem && 'update' in parsed) {
        try {
          await opts.inbox.update(session, c.id, parsed.update);
        } catch (err) {
          const e = toAppError(err);
          if (e.code !== 'invalid_request' && e.code !== 'not_found') throw err;
          problem = e.message;
        }
      }
      if (problem)
        return sendPage(
          reply,
          <MessagePage title="This change was not saved" signedIn={signedInOf(session)}>
            <p>{problem}</p>
            <p>
              <a href={`/inbox/${c.id}`}>Back to the conversation</a>
            </p>
          </MessagePage>,
          400,
        );
      return reply.redirect(`/inbox/${c.id}`, 303);
    },
  );
}

/**
 * `POST /inbox/{conversationId}/notes`: add a private note as the signed-in member. A blank or
 * too long note is the page again (400) with the words beside the field and the text kept;
 * nothing is stored then.
 */
function noteRoute(app: FastifyInstance, opts: WebRoutesOptions): void {
  app.post<{ Params: Static<typeof Params>; Body: Static<typeof NoteFormBody> }>(
    '/inbox/:conversationId/notes',
    {
      config: CONVERSATION_FORM,
      schema: {
        params: Params,
        body: NoteFormBody,
        response: { 302: Redirect, 303: Redirect, 400: HtmlPage, 403: HtmlPage, 404: HtmlPage },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const conversation = await conversationOf(opts, session, request.params.conversationId);
      if (!conversation) return sendNotFoundPage(reply);
      const body = request.body.body ?? '';
      const error = noteError(body);
      if (error)
        return renderInbox(
          opts,
          request,
          reply,
          session,
          { conversation, query: {}, note: { body, error } },
          400,
        );
      await opts.inbox.addNote(session, conversation.id, body);
      return reply.redirect(`/inbox/${conversation.id}#private-notes-title`, 303);
    },
  );
}
