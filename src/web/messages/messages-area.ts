/**
 * The `/messages` area: the page (the log, the credit, the composer) and the composer's form,
 * behind the area's guard (page-area.ts).
 *
 * @see docs/architecture.md "web/"
 */
import type { FastifyInstance } from 'fastify';
import { messagesPages } from './messages-page-routes.tsx';
import { messagesSendRoutes } from './messages-send-routes.tsx';
import { guardPortalArea } from '../page-area.ts';
import type { WebRoutesOptions } from '../web-options.ts';

export async function messagesArea(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  guardPortalArea(app, opts.sessions, { home: '/messages' });
  await app.register(messagesPages, opts);
  await app.register(messagesSendRoutes, opts);
}
