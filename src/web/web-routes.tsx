/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The account pages above the features, one page area per folder (sign-in and invitations, `/settings`
 * with its keys, webhooks and team, `/audit`, the connection flow's pages, `/contacts`, `/messages`, `/inbox`,
 * `/support`, the agents' desk), and the static files (stylesheet, favicon, the scripts). Each
 * area's guard (page-area.ts) checks the session, the form's CSRF token and the role once for
 * all its routes; routes stay thin: call a service, render.
 *
 * @see docs/architecture.md "web/"
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { FAVICON_SVG, INBOX_SCRIPT, ONE_TIME_TOKEN_SCRIPT } from '../browser/assets.ts';
import { pageErrorHandler } from '../browser/error-pages.tsx';
import { STYLESHEET } from '../browser/stylesheet.ts';
import { agentRoutes } from './agent/agent-routes.tsx';
import { apiKeysPages } from './settings/keys/api-keys-routes.tsx';
import { auditRoutes } from './audit/audit-routes.tsx';
import { redirectToCanonicalHost } from './canonical-host.ts';
import { connectionPages } from './connect/connection-pages.tsx';
import { contactsPages } from './contacts/contacts-routes.tsx';
import { messagesArea } from './messages/messages-area.ts';
import { inboxArea } from './inbox/inbox-area.ts';
import { settingsRoutes } from './settings/settings-routes.tsx';
import { teamPages } from './settings/team/team-routes.tsx';
import { webhooksPages } from './settings/webhooks/webhooks-routes.tsx';
import { signInRoutes } from './sign-in/sign-in-routes.tsx';
import { supportPages } from './support/support-routes.tsx';
import { Redirect, type WebRoutesOptions } from './web-options.ts';

export type { WebRoutesOptions } from './web-options.ts';

/** The pages' static files: path → type and body. Cached an hour (they change with releases). */
const ASSETS: Record<string, { type: string; body: string }> = {
  '/assets/portico.css': { type: 'text/css; charset=utf-8', body: STYLESHEET },
  '/assets/favicon.svg': { type: 'image/svg+xml', body: FAVICON_SVG },
  '/assets/one-time-token.js': {
    type: 'text/javascript; charset=utf-8',
    body: ONE_TIME_TOKEN_SCRIPT,
  },
  '/assets/inbox.js': { type: 'text/javascript; charset=utf-8', body: INBOX_SCRIPT },
};

/**
 * Register the pages: the static files, then each page area (an encapsulated plugin behind its
 * guard: a visitor without a session goes to `/login?next=…`, every state-changing form is
 * checked against the session's CSRF token).
 */
export async function webRoutes(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  // A person gets a page, never a JSON envelope: storage unavailable → 503 page, another
  // failure → 500 page with the request id, a mangled query or form → 400 page.
  app.setErrorHandler(pageErrorHandler);
  if (opts.canonicalOrigin) redirectToCanonicalHost(app, opts.canonicalOrigin);
  for (const [path, asset] of Object.entries(ASSETS)) {
    app.get(
      path,
      { schema: { response: { 200: Type.String({ description: 'A static file.' }) } } },
      async (_request, reply) =>
        reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body),
    );
  }
  // Browsers ask for /favicon.ico whatever the page says.
  app.get('/favicon.ico', { schema: { response: { 301: Redirect } } }, async (_request, reply) =>
    reply.redirect('/assets/favicon.svg', 301),
  );
  app.get('/', { schema: { response: { 302: Redirect } } }, async (_request, reply) =>
    reply.redirect('/settings', 302),
  );
  await app.register(signInRoutes, opts);
  await app.register(settingsRoutes, opts);
  await app.register(auditRoutes, opts);
  await app.register(connectionPages, opts);
  await app.register(contactsPages, opts);
  await app.register(messagesArea, opts);
  await app.register(inboxArea, opts);
  await app.register(webhooksPages, opts);
  await app.register(apiKeysPages, opts);
  await app.register(teamPages, opts);
  await app.register(supportPages, opts);
  await app.register(agentRoutes, opts);
}
