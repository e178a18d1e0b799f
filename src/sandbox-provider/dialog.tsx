/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The authorization dialog, where a person lets an app act for them.
 *
 * - `GET  /{version}/dialog/oauth`  the dialog: the app's name, a checkbox per permission asked
 *   for (untick one to decline it), Allow and Cancel. The permissions asked for are the
 *   request's `scope`, else its login configuration's (`config_id`), else only
 *   `public_profile`, as Facebook Login grants without either.
 * - `POST /{version}/dialog/oauth`  the person's decision. Allow records the grant and redirects
 *   to `redirect_uri` with a single-use `code` (bound to the request's PKCE `code_challenge`
 *   when it had one); Cancel redirects with
 *   `error=access_denied&error_reason=user_denied`. Either way `state` comes back unchanged.
 *
 * A request that is wrong in itself (unknown `client_id`, a `redirect_uri` not registered for the
 * app, a `response_type` other than `code`) gets an error page and never a redirect, as the
 * provider does: redirecting would hand the answer to an unverified address.
 *
 * Both answers carry `Referrer-Policy: no-referrer`, so neither `state` nor the code leaks to the
 * next site through the `Referer` header.
 *
 * @see https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow
 * @see https://developers.facebook.com/docs/facebook-login/facebook-login-for-business
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.1
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2.1
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.3
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { DialogErrorPage, DialogPage, page } from './pages.tsx';
import { permissionWords } from './permission-words.ts';
import type { CodeChallenge, SandboxAppConfig, SandboxState } from './sandbox-state.ts';
import { appName, HtmlResponse, VersionParams, type SurfaceOptions } from './surface.ts';

const DialogQuery = Type.Object({
  client_id: Type.Optional(Type.String({ maxLength: 200 })),
  redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
  response_type: Type.Optional(Type.String({ maxLength: 50 })),
  state: Type.Optional(Type.String({ maxLength: 2000 })),
  config_id: Type.Optional(Type.String({ maxLength: 200 })),
  scope: Type.Optional(Type.String({ maxLength: 2000 })),
  code_challenge: Type.Optional(Type.String({ maxLength: 200 })),
  code_challenge_method: Type.Optional(Type.String({ maxLength: 20 })),
});

/** The dialog's form as posted back (the hidden fields repeat the query, so it is re-checked). */
const Decision = Type.Object({
  client_id: Type.Optional(Type.String({ maxLength: 200 })),
  redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
  response_type: Type.Optional(Type.String({ maxLength: 50 })),
  state: Type.Optional(Type.String({ maxLength: 2000 })),
  config_id: Type.Optional(Type.String({ maxLength: 200 })),
  scope: Type.Optional(Type.String({ maxLength: 2000 })),
  code_challenge: Type.Optional(Type.String({ maxLength: 200 })),
  code_challenge_method: Type.Optional(Type.String({ maxLength: 20 })),
  user_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,20}$' })),
  /** The ticked permissions: one form field per checkbox, so a string or a list. */
  permission: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  decision: Type.Union([Type.Literal('allow'), Type.Literal('cancel')]),
});

/**
 * Check a dialog request the way the provider does.
 *
 * @returns the app and its exactly matching redirect URI, or the message of the error page.
 */
function checkDialog(
  state: SandboxState,
  q: {
    client_id?: string | undefined;
    redirect_uri?: string | undefined;
    response_type?: string | undefined;
    code_challenge?: string | undefined;
    code_challenge_method?: string | undefined;
  },
): { app: SandboxAppConfig; redirectUri: string; challenge: CodeChallenge | undefined } | string {
  const a = q.client_id ? state.apps.get(q.client_id) : undefined;
  if (!a) return 'Invalid App ID: the client_id is not a registered sandbox app.';
  if (!q.redirect_uri || !a.redirectUris.includes(q.redirect_uri))
    return "URL blocked: this redirect failed because the redirect URI is not whitelisted in the app's client OAuth settings. It must match exactly.";
  if (q.response_type !== 'code') return 'Unsupported response_type: expected code.';
  const challenge = pkceChallenge(q);
  if (typeof challenge === 'string') return challenge;
  return { app: a, redirectUri: q.redirect_uri, challenge };
}

/**
 * The PKCE challenge of a dialog request (RFC 7636 §4.3: 43–128 unreserved characters; the
 * method `S256` or `plain`, `plain` when absent), undefined without one, or the error message.
 */
function pkceChallenge(q: {
  code_challenge?: string | undefined;
  code_challenge_method?: string | undefined;
}): CodeChallenge | undefined | string {
  if (q.code_challenge === undefined) {
    return q.code_challenge_method === undefined
      ? undefined
      : 'Invalid code_challenge_method: code_challenge is missing.';
  }
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(q.code_challenge))
    return 'Invalid code_challenge: expected 43 to 128 characters.';
  const method = q.code_challenge_method ?? 'plain';
  if (method !== 'S256' && method !== 'plain')
    return 'Invalid code_challenge_method: expected S256 or plain.';
  return { codeChallenge: q.code_challenge, codeChallengeMethod: method };
}

/** What Facebook Login grants a request that names neither `scope` nor `config_id`. */
export const DEFAULT_LOGIN_PERMISSIONS = ['public_profile'];

/**
 * The permissions a dialog request asks for: its `scope` (comma- or space-separated), else
 * those of the app's login configuration (`config_id`; the sandbox app's registered list),
 * else only the default permission.
 */
function askedPermissions(
  state: SandboxState,
  app: SandboxAppConfig,
  q: { scope?: string | undefined; config_id?: string | undefined },
): string[] {
  if (q.scope) return [...new Set(q.scope.split(/[ ,]+/).filter(Boolean))];
  if (q.config_id) return state.permissionsOf(app.appId);
  return DEFAULT_LOGIN_PERMISSIONS;
}

/** The values of a form field that may appear once, several times or not at all. */
const list = (v: string | string[] | undefined) => (v === undefined ? [] : [v].flat());

/** The dialog surface: `GET` shows it, `POST` takes the person's decision. */
export async function dialogRoutes(
  app: FastifyInstance,
  { state, defaultUserId }: SurfaceOptions,
): Promise<void> {
  app.get(
    '/:version/dialog/oauth',
    { schema: { params: VersionParams, querystring: DialogQuery, response: HtmlResponse } },
    async (request, reply) => {
      const q = request.query as Static<typeof DialogQuery>;
      const { version } = request.params as Static<typeof VersionParams>;
      reply.type('text/html; charset=utf-8').header('referrer-policy', 'no-referrer');
      const checked = checkDialog(state, q);
      if (typeof checked === 'string')
        return reply.code(400).send(page(<DialogErrorPage message={checked} />));
      const names = askedPermissions(state, checked.app, q);
      return page(
        <DialogPage
          version={version}
          appName={appName(checked.app)}
          clientId={checked.app.appId}
          redirectUri={checked.redirectUri}
          state={q.state}
          configId={q.config_id}
          scope={q.scope}
          challenge={checked.challenge}
          userId={defaultUserId}
          permissions={names.map((name) => ({ name, description: permissionWords(name) }))}
        />,
      );
    },
  );

  app.post(
    '/:version/dialog/oauth',
    { schema: { params: VersionParams, body: Decision, response: HtmlResponse } },
    async (request, reply) => {
      const b = request.body as Static<typeof Decision>;
      const checked = checkDialog(state, b);
      if (typeof checked === 'string')
        return reply
          .code(400)
          .type('text/html; charset=utf-8')
          .send(page(<DialogErrorPage message={checked} />));
      const target = new URL(checked.redirectUri);
      if (b.decision === 'cancel') {
        target.searchParams.set('error', 'access_denied');
        target.searchParams.set('error_code', '200');
        target.searchParams.set('error_description', 'Permissions error');
        target.searchParams.set('error_reason', 'user_denied');
      } else {
        // Only the ticked permissions the request asked for are granted: an unticked one is
        // declined, and one it did not ask for is not the person's to give.
        const asked = new Set(askedPermissions(state, checked.app, b));
        const code = state.issueCode({
          appId: checked.app.appId,
          redirectUri: checked.redirectUri,
          userId: b.user_id ?? defaultUserId,
          permissions: list(b.permission).filter((p) => asked.has(p)),
          challenge: checked.challenge,
        });
        target.searchParams.set('code', code);
      }
      if (b.state !== undefined) target.searchParams.set('state', b.state);
      return reply.header('referrer-policy', 'no-referrer').redirect(target.toString(), 302);
    },
  );
}
