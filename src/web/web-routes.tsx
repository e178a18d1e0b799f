/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The account pages above the features: sign-in, `/settings`, the connection flow's pages, and
 * the stylesheet. Routes stay thin: read the session, check the form's CSRF token, call a
 * service, render.
 *
 * @see docs/architecture.md "web/"
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { sendUnavailable } from '../browser/refusal-pages.tsx';
import { STYLESHEET } from '../browser/stylesheet.ts';
import { toAppError } from '../platform/error-envelope.ts';
import { connectionPages } from './connection-pages.tsx';
import { contactsPages } from './contacts-routes.tsx';
import { settingsRoutes } from './settings-routes.tsx';
import { webhooksPages } from './webhooks-routes.tsx';
import { signInRoutes } from './sign-in-routes.tsx';
import { Redirect, type WebRoutesOptions } from './web-options.ts';

export type { WebRoutesOptions } from './web-options.ts';

/**
 * Register the pages. Every page that needs a session sends a visitor without one to
 * `/login?next=…`; every state-changing form is checked against the session's CSRF token.
 */
export async function webRoutes(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  // A person gets a page, not a JSON envelope, when storage does not answer in time (a held
  // lock, a statement timeout, a lost database); every other error goes to the app's handler.
  app.setErrorHandler((err, request, reply) => {
    if (toAppError(err).code !== 'unavailable') throw err;
    request.log.error({ err }, 'page failed: storage unavailable');
    return sendUnavailable(reply);
  });
  app.get(
    '/assets/portico.css',
    { schema: { response: { 200: Type.String({ description: 'The stylesheet.' }) } } },
    async (_request, reply) =>
      reply
        .type('text/css; charset=utf-8')
        .header('cache-control', 'public, max-age=3600')
        .send(STYLESHEET),
  );
  app.get('/', { schema: { response: { 302: Redirect } } }, async (_request, reply) =>
    reply.redirect('/settings', 302),
  );
  await app.register(signInRoutes, opts);
  await app.register(settingsRoutes, opts);
  await app.register(connectionPages, opts);
  await app.register(contactsPages, opts);
  await app.register(webhooksPages, opts);
}
