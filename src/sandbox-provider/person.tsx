/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The person's side of the provider, their "apps and websites" settings:
 *
 * - `GET  /`                        redirects to the apps page.
 * - `GET  /sandbox/apps`            every grant (a person who allowed an app) with its live tokens,
 *   and the WhatsApp account signals (signals-page.tsx).
 * - `POST /sandbox/grants/{action}` form `app_id`, `user_id`; `action` is one of
 *   `remove` ("Remove the app": deauthorize callback), `delete-data` ("Delete my data":
 *   data-deletion callback) or `revoke-token` ("Revoke the token": the app learns it from error
 *   190 on its next call). Answers a result page, also when the app's callback fails; 404 for an
 *   unknown app.
 *
 * These pages are the sandbox's own (no Graph path): they let a developer or a browser test do
 * what a person does in their account settings.
 *
 * @see https://developers.facebook.com/docs/development/create-an-app/app-dashboard/data-deletion-callback
 * @see https://developers.facebook.com/docs/graph-api/guides/error-handling
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { deleteData, removeApp } from './app-callbacks.ts';
import { AppsPage, page, ResultPage } from './pages.tsx';
import type { SandboxState } from './sandbox-state.ts';
import { SignalsSection } from './signals-page.tsx';
import { appName, HtmlResponse, type SurfaceOptions } from './surface.ts';

const GrantActionParams = Type.Object({
  action: Type.Union([
    Type.Literal('remove'),
    Type.Literal('delete-data'),
    Type.Literal('revoke-token'),
  ]),
});

const GrantAction = Type.Object({
  app_id: Type.String({ maxLength: 200 }),
  user_id: Type.String({ pattern: '^[0-9]{1,20}$' }),
});

/**
 * Do `action` for person `userId` of app `appId` (a registered app).
 *
 * @returns the result page's HTML.
 * @throws as `removeApp` / `deleteData` when the app's callback cannot be called.
 */
async function act(
  state: SandboxState,
  action: Static<typeof GrantActionParams>['action'],
  appId: string,
  userId: string,
): Promise<string> {
  if (action === 'revoke-token') {
    const n = state.revokeTokens(appId, userId);
    return page(
      <ResultPage
        title="Token revoked"
        lines={[
          `${n} token(s) of person ${userId} revoked. The app learns it on its next call to the provider (error 190).`,
        ]}
      />,
    );
  }
  if (action === 'remove') {
    const { status } = await removeApp(state, appId, userId);
    return page(
      <ResultPage
        title="App removed"
        lines={[
          `The app no longer has access for person ${userId}.`,
          `Its deauthorize callback answered HTTP ${status}.`,
        ]}
      />,
    );
  }
  const { status, body } = await deleteData(state, appId, userId);
  // The app's answer is untrusted: only string fields are shown (auto-escaped by preact).
  const answer = body as { url?: unknown; confirmation_code?: unknown };
  const link = typeof answer.url === 'string' ? answer.url : undefined;
  return page(
    <ResultPage
      title="Data deletion requested"
      lines={[
        `The app's data-deletion callback answered HTTP ${status}.`,
        typeof answer.confirmation_code === 'string'
          ? `Confirmation code: ${answer.confirmation_code}`
          : 'No confirmation code was returned.',
      ]}
      {...(link !== undefined && { link })}
    />,
  );
}

/** The person's side surface: the apps page and its three actions. */
export async function personRoutes(app: FastifyInstance, { state }: SurfaceOptions): Promise<void> {
  app.get('/', { schema: { response: { 302: Type.Null() } } }, async (_request, reply) =>
    reply.redirect('/sandbox/apps', 302),
  );

  app.get('/sandbox/apps', { schema: { response: HtmlResponse } }, async (_request, reply) => {
    const grants = [...state.grants.values()].map((g) => ({
      ...g,
      // A grant exists only for a registered app (the dialog checks), and apps are never removed.
      appName: appName(state.apps.get(g.appId)!),
      tokens: [...state.tokens.values()].filter(
        (t) => t.appId === g.appId && t.userId === g.userId && !t.revoked,
      ).length,
    }));
    return reply.type('text/html; charset=utf-8').send(
      page(
        <AppsPage grants={grants}>
          <SignalsSection state={state} />
        </AppsPage>,
      ),
    );
  });

  app.post(
    '/sandbox/grants/:action',
    { schema: { params: GrantActionParams, body: GrantAction, response: HtmlResponse } },
    async (request, reply) => {
      const { action } = request.params as Static<typeof GrantActionParams>;
      const { app_id: appId, user_id: userId } = request.body as Static<typeof GrantAction>;
      reply.type('text/html; charset=utf-8');
      if (!state.apps.has(appId))
        return reply.code(404).send(page(<ResultPage title="Unknown app" lines={[]} />));
      try {
        return await act(state, action, appId, userId);
      } catch (err) {
        return page(
          <ResultPage
            title="The app could not be reached"
            lines={[err instanceof Error ? err.message : 'The callback failed.']}
          />,
        );
      }
    },
  );
}
