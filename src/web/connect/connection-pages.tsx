/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The pages of the connection flow: `/connect` (the consent form), `/authorized` and
 * `/auth-error` (where every failure of the flow lands).
 *
 * @see docs/partner-connection.md "How an attempt ends"
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { pageCsp } from '../../browser/content-security-policy.ts';
import { sendPage } from '../../browser/render.ts';
import { isAuthorizationFailure } from '../../partner/oauth/authorization-outcome.ts';
import { isKnownCapability } from '../../partner/oauth/capability-words.ts';
import type { PartnerService } from '../../partner/partner-service.ts';
import { AuthErrorPage } from './auth-error-page.tsx';
import { AuthorizedPage } from './authorized-page.tsx';
import { ConnectPage } from './connect-page.tsx';
import { guardPortalArea, signedIn } from '../page-area.ts';
import { FormField, HtmlPage, Redirect, type WebRoutesOptions } from '../web-options.ts';

const ConnectQuery = Type.Object({ retry: FormField(10), reconnect: FormField(10) });
const AuthErrorQuery = Type.Object({
  reason: FormField(32),
  cause: FormField(32),
  missing: Type.Optional(
    Type.Union([
      Type.String({ maxLength: 200 }),
      Type.Array(Type.String({ maxLength: 200 }), { maxItems: 20 }),
    ]),
  ),
});

export async function connectionPages(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const { sessions, partner } = opts;
  const { isProduction } = sessions;
  guardPortalArea(app, sessions, { home: '/connect' });

  app.get<{ Querystring: Static<typeof ConnectQuery> }>(
    '/connect',
    { schema: { querystring: ConnectQuery, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const session = signedIn(request);
      // The consent form's submission ends in a redirect to the provider; CSP form-action
      // applies to that redirect too, so this page allows the provider's origin.
      reply.header('content-security-policy', pageCsp(isProduction, providerOrigin(partner)));
      return sendPage(
        reply,
        <ConnectPage
          email={session.email}
          csrfToken={session.csrfToken}
          refused={request.query.retry === 'consent'}
          isMainAdmin={session.isAdmin}
          providerName={partner.providerName}
          reconnect={request.query.reconnect === '1'}
        />,
      );
    },
  );

  app.get(
    '/authorized',
    { schema: { response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const session = signedIn(request);
      return sendPage(
        reply,
        <AuthorizedPage
          signedIn={{ email: session.email, csrfToken: session.csrfToken }}
          portalName={session.portalName}
          providerName={partner.providerName}
        />,
      );
    },
  );

  app.get<{ Querystring: Static<typeof AuthErrorQuery> }>(
    '/auth-error',
    {
      // Where every failure of the flow lands, signed in or not (and when storage is down).
      config: { page: { public: true } },
      // A mangled query still lands on a (generic) page rather than a JSON error.
      attachValidation: true,
      schema: { querystring: AuthErrorQuery, response: { 200: HtmlPage } },
    },
    async (request, reply) => {
      const query = request.validationError ? {} : request.query;
      // Signed in (the usual case): the app shell, so the way on is one click away. The page
      // needs no storage: it is where a storage failure of the flow lands, so a session that
      // cannot be read gives the page without the shell.
      const session = await sessions.read(request).catch(() => null);
      const reason = isAuthorizationFailure(query.reason) ? query.reason : null;
      // Only capabilities worded by our catalog are shown: the query cannot be used to put
      // arbitrary text on the page.
      const given = query.missing;
      const missing =
        reason === 'permission'
          ? [...new Set(Array.isArray(given) ? given : given ? [given] : [])].filter(
              isKnownCapability,
            )
          : [];
      return sendPage(
        reply,
        <AuthErrorPage
          reason={reason}
          missingCapabilities={missing}
          cookiesMissing={reason === 'state' && query.cause === 'cookies'}
          signInUrl={`${opts.appBaseUrl}/login`}
          signedIn={session ? { email: session.email, csrfToken: session.csrfToken } : undefined}
        />,
      );
    },
  );
}

/** The origin of the provider's authorization dialog (for CSP form-action on /connect). */
function providerOrigin(partner: Pick<PartnerService, 'authorizationUrl'>): string | null {
  try {
    return new URL(partner.authorizationUrl('0')).origin;
  } catch {
    return null;
  }
}
