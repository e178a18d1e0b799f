/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The inbox's live half and its media:
 *
 * - `GET /inbox/events`: server-sent events for the signed-in portal. Each `change` event names
 *   the conversations that changed (`{"conversationIds": ["cnv_…"]}`, or `{"all": true}` after
 *   this instance missed notifications), never content; `/assets/inbox.js` then fetches the
 *   fragments it shows. Fed by messaging's conversation hub (PostgreSQL LISTEN/NOTIFY, so a
 *   message stored by any instance reaches every instance's streams). A comment every
 *   {@link HEARTBEAT_MS} keeps proxies from closing the stream and re-checks the session: a
 *   signed-out session's stream ends.
 *
 *   Every event has an id: the instance's clock in milliseconds when it was sent. A browser
 *   reconnecting after a drop sends the last one as `Last-Event-ID`, and the stream first
 *   replays, from the database, the conversations with a message since then (less
 *   {@link REPLAY_MARGIN_MS}, which covers the provider's timestamps, clocks and webhooks that
 *   arrive late), as one `change` event. The replay is bounded: more than
 *   {@link REPLAY_LIMIT} conversations, an id older than {@link REPLAY_WINDOW_MS}, or one that
 *   is not an id, replays `{"all": true}`. `/assets/inbox.js` also reloads its list on every
 *   reconnect, for what the replay does not name (statuses, reads).
 * - `GET /inbox/media/{mediaId}`: an inbound medium's bytes for the signed-in portal (an
 *   `<img>` of the thread, or a download), streamed from messaging's media service; the
 *   provider's URL and token never reach the browser.
 *
 * @see https://html.spec.whatwg.org/multipage/server-sent-events.html
 * @see docs/decisions/0029-inbox.md
 */
import type { ServerResponse } from 'node:http';
import { create as contentDisposition } from 'content-disposition';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { sendNotFoundPage } from '../../browser/error-pages.tsx';
import { MessagePage } from '../../browser/message-page.tsx';
import { sendPage } from '../../browser/render.ts';
import { toAppError } from '../../platform/error-envelope.ts';
import { signedIn } from '../page-area.ts';
import { HtmlPage, Redirect, type WebRoutesOptions } from '../web-options.ts';

/** Interval of the keep-alive comment and session check, in milliseconds. */
export const HEARTBEAT_MS = 20_000;
/** What the browser waits before reconnecting a dropped stream, in milliseconds. */
const RETRY_MS = 2_000;
/** How far before `Last-Event-ID` a replay looks, in milliseconds. */
export const REPLAY_MARGIN_MS = 60_000;
/** Oldest `Last-Event-ID` replayed by name, in milliseconds; older replays `{"all": true}`. */
export const REPLAY_WINDOW_MS = 60 * 60_000;
/** Most conversations a replay names; more replays `{"all": true}`. */
export const REPLAY_LIMIT = 100;
const EVENT_ID = /^[0-9]{1,15}$/;
const MEDIA_ID = /^med_[0-9A-Za-z]{1,60}$/;
/** Media types shown inline; every other type is sent as an attachment. */
const INLINE_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif']);

const MediaParams = Type.Object({ mediaId: Type.String({ maxLength: 100 }) });

export async function inboxStreamRoutes(
  app: FastifyInstance,
  opts: WebRoutesOptions,
): Promise<void> {
  const { sessions } = opts;
  const open = new Set<ServerResponse>();
  // Streams never end by themselves: closing the app ends them first.
  app.addHook('preClose', async () => {
    for (const raw of open) raw.end();
    open.clear();
  });

  app.get(
    '/inbox/events',
    {
      // Opened by `/assets/inbox.js`: 401 without a session, never a redirect.
      config: { page: { fragment: true } },
      schema: {
        response: { 200: Type.String({ description: 'text/event-stream' }), 401: HtmlPage },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
      });
      open.add(raw);
      const send = (event: string, data: object) =>
        !raw.writableEnded &&
        raw.write(`id: ${Date.now()}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      const change = (ids: string[] | null) =>
        send('change', ids === null ? { all: true } : { conversationIds: ids });
      // Subscribed before the replay reads, so that nothing committed in between is lost.
      const unsubscribe = opts.inbox.events.subscribe(session.portalId, change);
      const heartbeat = setInterval(() => {
        raw.write(': ping\n\n');
        sessions.read(request).then(
          (still) => {
            if (!still) raw.end();
          },
          () => raw.end(),
        );
      }, HEARTBEAT_MS);
      heartbeat.unref();
      const done = () => {
        clearInterval(heartbeat);
        unsubscribe();
        open.delete(raw);
      };
      raw.on('close', done);
      raw.write(`retry: ${RETRY_MS}\n\n`);
      const lastEventId = request.headers['last-event-id'];
      if (lastEventId !== undefined) {
        const ids = await replay(opts.inbox, session.portalId, String(lastEventId)).catch(
          (err: unknown) => (request.log.warn({ err }, 'inbox event replay failed'), null),
        );
        if (ids === null || ids.length > 0) change(ids);
      }
      send('ready', {});
    },
  );

  app.get<{ Params: Static<typeof MediaParams> }>(
    '/inbox/media/:mediaId',
    {
      config: { page: { back: '/inbox' } },
      schema: {
        params: MediaParams,
        response: { 200: Type.Any({ description: 'The medium.' }), 302: Redirect, 404: HtmlPage },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const id = request.params.mediaId;
      if (!MEDIA_ID.test(id)) return sendNotFoundPage(reply);
      const abort = new AbortController();
      request.raw.on('close', () => abort.abort());
      let medium;
      try {
        medium = await opts.inbox.media(session.portalId, id, abort.signal);
      } catch (err) {
        const e = toAppError(err);
        if (e.code === 'not_found') return sendNotFoundPage(reply);
        if (e.status >= 500 && e.code === 'internal_error') throw err;
        return sendPage(
          reply,
          <MessagePage
            title="This file cannot be shown"
            signedIn={{ email: session.email, csrfToken: session.csrfToken }}
          >
            <p>{e.message}</p>
          </MessagePage>,
          e.status,
        );
      }
      // Only the common still-image types show inline (an <img>); anything else is a download,
      // and the response may run nothing whatever it holds.
      const inline = INLINE_TYPES.has(medium.contentType.toLowerCase());
      reply
        .header('cache-control', 'private, max-age=300')
        .header('content-type', medium.contentType)
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header(
          'content-disposition',
          contentDisposition(medium.fileName ?? (inline ? 'image' : 'file'), {
            type: inline ? 'inline' : 'attachment',
          }),
        );
      if (medium.contentLength !== undefined)
        reply.header('content-length', String(medium.contentLength));
      return reply.send(medium.body);
    },
  );
}

/**
 * The conversations to name after a reconnect with `lastEventId`: [] when none changed,
 * null for "read everything again".
 */
async function replay(
  inbox: WebRoutesOptions['inbox'],
  portalId: number,
  lastEventId: string,
): Promise<string[] | null> {
  if (!EVENT_ID.test(lastEventId)) return null;
  const sent = Number(lastEventId);
  if (Date.now() - sent > REPLAY_WINDOW_MS) return null;
  const ids = await inbox.changedSince(
    portalId,
    new Date(sent - REPLAY_MARGIN_MS),
    REPLAY_LIMIT + 1,
  );
  return ids.length > REPLAY_LIMIT ? null : ids;
}
