/**
 * The `/inbox` area: the conversations and a thread, the reply box's forms (text, template,
 * buttons and list, reaction, file), the panes and the event stream `/assets/inbox.js` fetches,
 * and the media of a thread, behind the area's guard (page-area.ts).
 *
 * @see docs/messaging.md "Inbox"
 */
import type { FastifyInstance } from 'fastify';
import { inboxReplyRoutes } from './inbox-reply-routes.ts';
import { inboxRichRoutes } from './inbox-rich-routes.ts';
import { inboxPages } from './inbox-routes.tsx';
import { inboxStreamRoutes } from './inbox-stream-routes.tsx';
import { guardPortalArea } from '../page-area.ts';
import type { WebRoutesOptions } from '../web-options.ts';

export async function inboxArea(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  guardPortalArea(app, opts.sessions, { home: '/inbox' });
  await app.register(inboxPages, opts);
  await app.register(inboxReplyRoutes, opts);
  await app.register(inboxRichRoutes, opts);
  await app.register(inboxStreamRoutes, opts);
}
