/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The confirmation pages of the two destructive actions of `/settings`: regenerating the API
 * token and disconnecting the provider. Each says what stops working; its form posts with
 * `confirm=yes` to the route that acts (which sends an unconfirmed form back here).
 *
 * @see docs/decisions/0009-pages.md
 */
import type { FastifyInstance } from 'fastify';
import { sendNotAllowed } from '../../browser/refusal-pages.tsx';
import { sendPage } from '../../browser/render.ts';
import type { WebSession } from '../../browser/session-store.ts';
import { ConfirmPage } from './confirm-page.tsx';
import { signedIn } from '../page-area.ts';
import { HtmlPage, Redirect, type WebRoutesOptions } from '../web-options.ts';

export const ONLY_MAIN_ADMIN_TOKEN =
  'Only an administrator of the portal can regenerate the API token.';
const ONLY_MAIN_ADMIN_CONNECTION =
  'Only an administrator of the portal can connect or disconnect the provider account.';

/** The two confirmation pages; registered by the `/settings` area, behind its guard. */
export async function confirmRoutes(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const { accounts, partner } = opts;
  const signedInOf = (s: WebSession) => ({ email: s.email, csrfToken: s.csrfToken });

  app.get(
    '/settings/token/regenerate',
    { schema: { response: { 200: HtmlPage, 302: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      const session = signedIn(request);
      if (!session.isAdmin) return sendNotAllowed(reply, session, ONLY_MAIN_ADMIN_TOKEN);
      const portal = await accounts.showPortal(session.portalCode);
      return sendPage(
        reply,
        <ConfirmPage
          title="Regenerate the API token?"
          signedIn={signedInOf(session)}
          action="/settings/token"
          confirmLabel="Regenerate token"
        >
          <p>
            The current token
            {portal.token ? (
              <>
                {' '}
                ending in <code>…{portal.token.hint}</code>
              </>
            ) : null}{' '}
            <strong>stops working at once</strong>: every program, integration or script that calls
            the Portico API with it is refused (401 <code>invalid_token</code>) until you give it
            the new token.
          </p>
          <p>
            The new token keeps the same permissions. It is shown once, on the next page: have
            somewhere safe ready to store it.
          </p>
        </ConfirmPage>,
      );
    },
  );

  app.get(
    '/settings/disconnect',
    { schema: { response: { 200: HtmlPage, 302: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      const session = signedIn(request);
      if (!session.isAdmin) return sendNotAllowed(reply, session, ONLY_MAIN_ADMIN_CONNECTION);
      const name = partner.providerName;
      return sendPage(
        reply,
        <ConfirmPage
          title={`Disconnect ${name}?`}
          signedIn={signedInOf(session)}
          action="/api/auth/partner/disconnect"
          confirmLabel={`Disconnect ${name}`}
        >
          <p>Disconnecting stops at once everything Portico does with your {name} account:</p>
          <ul>
            <li>no message can be sent or received through it;</li>
            <li>its business accounts and phone numbers are no longer read;</li>
            <li>
              the stored access is deleted here, and Portico's access is removed at {name} too.
            </li>
          </ul>
          <p>Your contacts, tickets and API token stay. You can connect again at any time.</p>
        </ConfirmPage>,
      );
    },
  );
}
