/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The sandbox provider: an emulator of the provider (Meta's Graph platform, Facebook Login for
 * Business) for development and tests, speaking its documented wire format so the production
 * code path cannot tell the difference. A separate Fastify app on its own host and port, so
 * that in a browser Portico (`localhost`) and the provider (`127.0.0.1`) are different sites.
 * Never started in production (main.ts).
 *
 * Routes:
 * - `GET  /{version}/dialog/oauth`    the authorization dialog (Allow, Cancel, decline one)
 * - `POST /{version}/dialog/oauth`    the person's decision → redirect to redirect_uri
 * - `POST /{version}/oauth/access_token`  code exchange, or `grant_type=fb_exchange_token`
 * - `GET|POST /{version}/debug_token` token inspection (app token in `Authorization`)
 * - `GET  /{version}/me`              a Graph read with the user's token
 * - `GET  /sandbox/apps`              the person's apps: remove the app, delete my data, revoke
 *
 * @see ../../../shared/DESIGN.md "Provider code exchange", "Callbacks from the provider"
 * @see https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow
 */
import type { AddressInfo } from 'node:net';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { AppsPage, DialogErrorPage, DialogPage, page, ResultPage } from './pages.tsx';
import { permissionWords } from './permission-words.ts';
import {
  fbtraceId,
  SandboxState,
  type SandboxAppConfig,
  type SandboxCall,
} from './sandbox-state.ts';

export type { SandboxAppConfig, SandboxCall } from './sandbox-state.ts';

export interface SandboxProviderOptions {
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** TCP port; 0 picks a free one (tests). */
  port?: number;
  apps: SandboxAppConfig[];
  /** The person the dialog signs in as by default (Graph-like digits). */
  defaultUserId?: string;
  /** A logger for start/stop lines only; requests are not logged (their queries carry state). */
  logger?: FastifyBaseLogger;
}

export interface SandboxProvider {
  /** `http://host:port`, the base of both the dialog and the Graph API. */
  url: string;
  close(): Promise<void>;
  /** Every request received, in order (method, path+query, whose token). */
  calls: SandboxCall[];
  /** Move the sandbox clock forward by `ms` milliseconds (expire codes and tokens in tests). */
  advanceTime(ms: number): void;
  /**
   * What the dialog does when a person clicks Allow: record the grant and return a single-use
   * authorization code for `redirectUri` (tests that do not drive a browser).
   */
  authorize(input: {
    appId: string;
    redirectUri: string;
    userId?: string;
    permissions?: string[];
  }): string;
  /** "Revoke the token": later debug_token and Graph calls with it answer error 190. */
  revokeTokens(appId: string, userId: string): number;
  /** "Remove the app": drop the grant, revoke its tokens, POST a signed deauthorize request. */
  removeApp(appId: string, userId: string): Promise<{ status: number }>;
  /** "Delete my data": POST a signed data-deletion request; the app's JSON answer. */
  deleteData(appId: string, userId: string): Promise<{ status: number; body: unknown }>;
  /** A correctly signed `signed_request` for a person of an app (tests). */
  signedRequestFor(appId: string, userId: string): string;
  /** The live (unrevoked) tokens issued to a person of an app (tests scan storage for them). */
  tokensOf(appId: string, userId: string): string[];
  /** Change an app's registration (e.g. its callback URLs once the app's port is known). */
  configureApp(appId: string, patch: Partial<Omit<SandboxAppConfig, 'appId'>>): void;
}

const VERSION = '^v[0-9]+\\.[0-9]+$';
const HtmlResponse = { 200: Type.String(), 400: Type.String(), 404: Type.String() };
const GraphError = Type.Object({
  error: Type.Object({
    message: Type.String(),
    type: Type.String(),
    code: Type.Integer(),
    error_subcode: Type.Optional(Type.Integer()),
    fbtrace_id: Type.String(),
  }),
});
const StrOrList = Type.Union([Type.String(), Type.Array(Type.String())]);

function graphError(
  reply: FastifyReply,
  status: number,
  code: number,
  message: string,
  subcode?: number,
) {
  return reply.code(status).send({
    error: {
      message,
      type: 'OAuthException',
      code,
      ...(subcode !== undefined && { error_subcode: subcode }),
      fbtrace_id: fbtraceId(),
    },
  });
}

const list = (v: string | string[] | undefined) => (v === undefined ? [] : [v].flat());

/** Bearer token of an `Authorization` header. */
function bearer(request: FastifyRequest): string | undefined {
  const h = request.headers.authorization;
  return h?.startsWith('Bearer ') ? h.slice(7).trim() : undefined;
}

/**
 * Start a sandbox provider.
 *
 * @returns its base URL, a `close()`, and test hooks (call log, clock, direct actions).
 */
export async function startSandboxProvider(
  options: SandboxProviderOptions,
): Promise<SandboxProvider> {
  const state = new SandboxState(options.apps);
  const defaultUserId = options.defaultUserId ?? '100012345678';
  const app = Fastify({
    // No request logging: dialog URLs carry `state`, exchange bodies carry codes and secrets.
    logger: false,
    bodyLimit: 64 * 1024,
  });
  await app.register(formbody);

  const callOf = new WeakMap<FastifyRequest, SandboxCall>();
  app.addHook('onRequest', async (request) => {
    const call: SandboxCall = { method: request.method, url: request.url };
    callOf.set(request, call);
    state.calls.push(call);
  });
  const noteCall = (request: FastifyRequest, userId?: string, appId?: string) => {
    const call = callOf.get(request);
    if (call) Object.assign(call, userId && { userId }, appId && { appId });
  };

  const appName = (a: SandboxAppConfig) => a.name ?? `Sandbox app ${a.appId}`;

  /** Validate a dialog request the way the provider does: errors show a page, no redirect. */
  function checkDialog(q: {
    client_id?: string | undefined;
    redirect_uri?: string | undefined;
    response_type?: string | undefined;
  }): { app: SandboxAppConfig; redirectUri: string } | string {
    const a = q.client_id ? state.apps.get(q.client_id) : undefined;
    if (!a) return 'Invalid App ID: the client_id is not a registered sandbox app.';
    if (!q.redirect_uri || !a.redirectUris.includes(q.redirect_uri))
      return "URL blocked: this redirect failed because the redirect URI is not whitelisted in the app's client OAuth settings. It must match exactly.";
    if (q.response_type !== 'code') return 'Unsupported response_type: expected code.';
    return { app: a, redirectUri: q.redirect_uri };
  }

  const DialogQuery = Type.Object({
    client_id: Type.Optional(Type.String({ maxLength: 200 })),
    redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
    response_type: Type.Optional(Type.String({ maxLength: 50 })),
    state: Type.Optional(Type.String({ maxLength: 2000 })),
    config_id: Type.Optional(Type.String({ maxLength: 200 })),
    scope: Type.Optional(Type.String({ maxLength: 2000 })),
  });

  app.get(
    '/:version/dialog/oauth',
    {
      schema: {
        params: Type.Object({ version: Type.String({ pattern: VERSION }) }),
        querystring: DialogQuery,
        response: HtmlResponse,
      },
    },
    async (request, reply) => {
      const q = request.query as Static<typeof DialogQuery>;
      const { version } = request.params as { version: string };
      reply.type('text/html; charset=utf-8').header('referrer-policy', 'no-referrer');
      const checked = checkDialog(q);
      if (typeof checked === 'string')
        return reply.code(400).send(page(<DialogErrorPage message={checked} />));
      const names = q.scope
        ? q.scope.split(/[ ,]+/).filter(Boolean)
        : state.permissionsOf(checked.app.appId);
      return page(
        <DialogPage
          version={version}
          appName={appName(checked.app)}
          clientId={checked.app.appId}
          redirectUri={checked.redirectUri}
          state={q.state}
          configId={q.config_id}
          userId={defaultUserId}
          permissions={names.map((name) => ({ name, description: permissionWords(name) }))}
        />,
      );
    },
  );

  const Decision = Type.Object({
    client_id: Type.Optional(Type.String({ maxLength: 200 })),
    redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
    response_type: Type.Optional(Type.String({ maxLength: 50 })),
    state: Type.Optional(Type.String({ maxLength: 2000 })),
    config_id: Type.Optional(Type.String({ maxLength: 200 })),
    user_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,20}$' })),
    permission: Type.Optional(StrOrList),
    decision: Type.Union([Type.Literal('allow'), Type.Literal('cancel')]),
  });

  app.post(
    '/:version/dialog/oauth',
    {
      schema: {
        params: Type.Object({ version: Type.String({ pattern: VERSION }) }),
        body: Decision,
        response: HtmlResponse,
      },
    },
    async (request, reply) => {
      const b = request.body as Static<typeof Decision>;
      const checked = checkDialog(b);
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
        const code = state.issueCode({
          appId: checked.app.appId,
          redirectUri: checked.redirectUri,
          userId: b.user_id ?? defaultUserId,
          permissions: list(b.permission),
        });
        target.searchParams.set('code', code);
      }
      if (b.state !== undefined) target.searchParams.set('state', b.state);
      return reply.header('referrer-policy', 'no-referrer').redirect(target.toString(), 302);
    },
  );

  const TokenBody = Type.Object({
    client_id: Type.Optional(Type.String({ maxLength: 200 })),
    client_secret: Type.Optional(Type.String({ maxLength: 1000 })),
    redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
    code: Type.Optional(Type.String({ maxLength: 2000 })),
    grant_type: Type.Optional(Type.String({ maxLength: 100 })),
    fb_exchange_token: Type.Optional(Type.String({ maxLength: 2000 })),
  });
  const TokenResponse = Type.Object({
    access_token: Type.String(),
    token_type: Type.String(),
    expires_in: Type.Integer(),
  });

  app.post(
    '/:version/oauth/access_token',
    {
      schema: {
        params: Type.Object({ version: Type.String({ pattern: VERSION }) }),
        body: TokenBody,
        response: { 200: TokenResponse, 400: GraphError },
      },
    },
    async (request, reply) => {
      const b = request.body as Static<typeof TokenBody>;
      const a = b.client_id ? state.apps.get(b.client_id) : undefined;
      if (!a)
        return graphError(reply, 400, 101, 'Error validating application. Invalid application ID.');
      noteCall(request, undefined, a.appId);
      if (b.client_secret !== a.appSecret)
        return graphError(reply, 400, 1, 'Error validating client secret.');
      const now = state.now();
      if (b.grant_type === 'fb_exchange_token') {
        const old = b.fb_exchange_token ? state.tokens.get(b.fb_exchange_token) : undefined;
        if (!old || old.appId !== a.appId || old.revoked || old.expiresAtMs <= now)
          return graphError(
            reply,
            400,
            190,
            'Error validating access token: the session is invalid.',
            460,
          );
        noteCall(request, old.userId, a.appId);
        const grant = state.grant(a.appId, old.userId);
        if (!grant)
          return graphError(
            reply,
            400,
            190,
            'Error validating access token: the user has not authorized the application.',
            458,
          );
        const { token, record } = state.issueToken(grant, true);
        return {
          access_token: token,
          token_type: 'bearer',
          expires_in: Math.floor((record.expiresAtMs - now) / 1000),
        };
      }
      if (b.grant_type !== undefined) return graphError(reply, 400, 100, 'Unsupported grant_type.');
      const record = b.code ? state.codes.get(b.code) : undefined;
      if (!record || record.appId !== a.appId)
        return graphError(reply, 400, 100, 'Invalid verification code format.');
      if (record.used)
        return graphError(reply, 400, 100, 'This authorization code has been used.', 36009);
      if (record.expiresAtMs <= now)
        return graphError(reply, 400, 100, 'This authorization code has expired.', 36007);
      if (b.redirect_uri !== record.redirectUri)
        return graphError(
          reply,
          400,
          100,
          'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request',
          36008,
        );
      record.used = true;
      noteCall(request, record.userId, a.appId);
      const grant = state.grant(a.appId, record.userId);
      if (!grant)
        return graphError(reply, 400, 100, 'This authorization code has been used.', 36009);
      const { token, record: issued } = state.issueToken(grant, false);
      return {
        access_token: token,
        token_type: 'bearer',
        expires_in: Math.floor((issued.expiresAtMs - now) / 1000),
      };
    },
  );

  const DebugInput = Type.Object({
    input_token: Type.Optional(Type.String({ maxLength: 2000 })),
    access_token: Type.Optional(Type.String({ maxLength: 2000 })),
  });
  const debugToken = async (request: FastifyRequest, reply: FastifyReply) => {
    const input = {
      ...(request.query as Static<typeof DebugInput>),
      ...((request.body ?? {}) as Static<typeof DebugInput>),
    };
    const a = state.appForAppToken(bearer(request) ?? input.access_token);
    if (!a)
      return graphError(reply, 400, 190, 'Invalid OAuth access token - Cannot parse access token');
    noteCall(request, undefined, a.appId);
    const record = input.input_token ? state.tokens.get(input.input_token) : undefined;
    if (!record || record.appId !== a.appId)
      return {
        data: {
          is_valid: false,
          error: { code: 190, message: 'Invalid OAuth access token.' },
          scopes: [],
        },
      };
    noteCall(request, record.userId, a.appId);
    const now = state.now();
    const base = {
      app_id: record.appId,
      type: 'USER',
      application: appName(a),
      user_id: record.userId,
      issued_at: Math.floor(record.issuedAtMs / 1000),
      expires_at: Math.floor(record.expiresAtMs / 1000),
      data_access_expires_at: Math.floor(record.expiresAtMs / 1000) + 30 * 24 * 3600,
    };
    if (record.revoked || record.expiresAtMs <= now)
      return {
        data: {
          ...base,
          is_valid: false,
          error: {
            code: 190,
            subcode: record.revoked ? 460 : 463,
            message: record.revoked
              ? 'The session has been invalidated because the user changed their password or Facebook has changed the session for security reasons.'
              : 'Session has expired.',
          },
          scopes: [],
        },
      };
    return {
      data: {
        ...base,
        is_valid: true,
        scopes: record.permissions,
        granular_scopes: record.permissions.map((scope) => ({
          scope,
          ...(scope !== 'public_profile' && scope !== 'email' && { target_ids: record.assetIds }),
        })),
      },
    };
  };
  const debugSchema = {
    querystring: DebugInput,
    response: {
      200: Type.Object({ data: Type.Record(Type.String(), Type.Unknown()) }),
      400: GraphError,
    },
  };
  app.get('/debug_token', { schema: debugSchema }, debugToken);
  app.post('/debug_token', { schema: { ...debugSchema, body: DebugInput } }, debugToken);
  app.get('/:version/debug_token', { schema: debugSchema }, debugToken);
  app.post('/:version/debug_token', { schema: { ...debugSchema, body: DebugInput } }, debugToken);

  app.get(
    '/:version/me',
    {
      schema: {
        params: Type.Object({ version: Type.String({ pattern: VERSION }) }),
        querystring: Type.Object({ fields: Type.Optional(Type.String({ maxLength: 200 })) }),
        response: {
          200: Type.Object({ id: Type.String(), name: Type.String() }),
          400: GraphError,
        },
      },
    },
    async (request, reply) => {
      const token = bearer(request);
      const record = token ? state.tokens.get(token) : undefined;
      if (!record)
        return graphError(
          reply,
          400,
          190,
          'Invalid OAuth access token - Cannot parse access token',
        );
      noteCall(request, record.userId, record.appId);
      if (record.revoked)
        return graphError(
          reply,
          400,
          190,
          'Error validating access token: the session has been invalidated.',
          460,
        );
      if (record.expiresAtMs <= state.now())
        return graphError(
          reply,
          400,
          190,
          'Error validating access token: Session has expired.',
          463,
        );
      return { id: record.userId, name: `Sandbox person ${record.userId}` };
    },
  );

  // ---- The person's side: "apps and websites" ----------------------------------------------
  app.get('/', { schema: { response: { 302: Type.Null() } } }, async (_request, reply) =>
    reply.redirect('/sandbox/apps', 302),
  );
  app.get('/sandbox/apps', { schema: { response: HtmlResponse } }, async (_request, reply) => {
    const grants = [...state.grants.values()].map((g) => ({
      ...g,
      appName: appName(state.apps.get(g.appId)!),
      tokens: [...state.tokens.values()].filter(
        (t) => t.appId === g.appId && t.userId === g.userId && !t.revoked,
      ).length,
    }));
    return reply.type('text/html; charset=utf-8').send(page(<AppsPage grants={grants} />));
  });

  async function postSignedRequest(url: string | undefined, appId: string, userId: string) {
    if (!url) throw new Error('The app has no callback URL configured in the sandbox.');
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ signed_request: state.signedRequestFor(appId, userId) }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON: keep the text */
    }
    return { status: res.status, body };
  }

  const removeApp = async (appId: string, userId: string) => {
    state.removeGrant(appId, userId);
    const { status } = await postSignedRequest(
      state.apps.get(appId)?.deauthorizeCallbackUrl,
      appId,
      userId,
    );
    return { status };
  };
  const deleteData = async (appId: string, userId: string) => {
    state.removeGrant(appId, userId);
    return postSignedRequest(state.apps.get(appId)?.dataDeletionCallbackUrl, appId, userId);
  };

  const GrantAction = Type.Object({
    app_id: Type.String({ maxLength: 200 }),
    user_id: Type.String({ pattern: '^[0-9]{1,20}$' }),
  });
  app.post(
    '/sandbox/grants/:action',
    {
      schema: {
        params: Type.Object({
          action: Type.Union([
            Type.Literal('remove'),
            Type.Literal('delete-data'),
            Type.Literal('revoke-token'),
          ]),
        }),
        body: GrantAction,
        response: HtmlResponse,
      },
    },
    async (request, reply) => {
      const { action } = request.params as { action: 'remove' | 'delete-data' | 'revoke-token' };
      const { app_id: appId, user_id: userId } = request.body as Static<typeof GrantAction>;
      reply.type('text/html; charset=utf-8');
      if (!state.apps.has(appId))
        return reply.code(404).send(page(<ResultPage title="Unknown app" lines={[]} />));
      try {
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
          const { status } = await removeApp(appId, userId);
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
        const { status, body } = await deleteData(appId, userId);
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

  await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  options.logger?.info({ url: `http://${host}:${address.port}` }, 'sandbox provider listening');
  return {
    url: `http://${host}:${address.port}`,
    close: async () => {
      await app.close();
    },
    calls: state.calls,
    advanceTime: (ms) => state.advanceTime(ms),
    authorize: (input) =>
      state.issueCode({
        appId: input.appId,
        redirectUri: input.redirectUri,
        userId: input.userId ?? defaultUserId,
        permissions: input.permissions ?? state.permissionsOf(input.appId),
      }),
    revokeTokens: (appId, userId) => state.revokeTokens(appId, userId),
    removeApp,
    deleteData,
    signedRequestFor: (appId, userId) => state.signedRequestFor(appId, userId),
    tokensOf: (appId, userId) =>
      [...state.tokens.entries()]
        .filter(([, r]) => r.appId === appId && r.userId === userId && !r.revoked)
        .map(([token]) => token),
    configureApp: (appId, patch) => {
      const current = state.apps.get(appId);
      if (!current) throw new Error(`unknown sandbox app ${appId}`);
      state.apps.set(appId, { ...current, ...patch });
    },
  };
}
