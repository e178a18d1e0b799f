/**
 * Token inspection, `GET|POST /debug_token` and `/{version}/debug_token` with `input_token` (in
 * the query or a form body): what an app learns about a person's token, authenticated with its
 * app token `{app_id}|{app_secret}` (as `Authorization: Bearer …` or an `access_token` field).
 *
 * Answers `{"data": {…}}` with HTTP 200 even for a dead or foreign token (`is_valid: false` and
 * an `error` inside `data`, as Graph does); only a bad app token gets a Graph error (400, 190).
 * Times are Unix seconds. `granular_scopes[].target_ids` lists the person's assets for every
 * permission except `public_profile` and `email`, which concern no asset.
 *
 * @see https://developers.facebook.com/docs/graph-api/reference/debug_token
 * @see https://developers.facebook.com/docs/facebook-login/guides/access-tokens
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { bearer, UNPARSABLE_TOKEN } from './graph-auth.ts';
import { GraphError, graphError } from './graph-errors.ts';
import type { SandboxAppConfig, TokenRecord } from './sandbox-state.ts';
import { appName, type SurfaceOptions } from './surface.ts';

const DebugInput = Type.Object({
  input_token: Type.Optional(Type.String({ maxLength: 2000 })),
  access_token: Type.Optional(Type.String({ maxLength: 2000 })),
});

const debugSchema = {
  querystring: DebugInput,
  response: {
    200: Type.Object({ data: Type.Record(Type.String(), Type.Unknown()) }),
    400: GraphError,
  },
};

/** How long after its token expires an app keeps access to the person's data, in seconds. */
const DATA_ACCESS_AFTER_EXPIRY_S = 30 * 24 * 3600;

/** `data` for the token `record` of `app`, judged at `nowMs` on the sandbox clock. */
function inspection(app: SandboxAppConfig, record: TokenRecord, nowMs: number) {
  const base = {
    app_id: record.appId,
    type: 'USER',
    application: appName(app),
    user_id: record.userId,
    issued_at: Math.floor(record.issuedAtMs / 1000),
    expires_at: Math.floor(record.expiresAtMs / 1000),
    data_access_expires_at: Math.floor(record.expiresAtMs / 1000) + DATA_ACCESS_AFTER_EXPIRY_S,
  };
  if (record.revoked || record.expiresAtMs <= nowMs)
    return {
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
    };
  return {
    ...base,
    is_valid: true,
    scopes: record.permissions,
    granular_scopes: record.permissions.map((scope) => ({
      scope,
      ...(scope !== 'public_profile' && scope !== 'email' && { target_ids: record.assetIds }),
    })),
  };
}

/** The token inspection surface. */
export async function debugTokenRoutes(
  app: FastifyInstance,
  { state, noteCall }: SurfaceOptions,
): Promise<void> {
  const debugToken = async (request: FastifyRequest, reply: FastifyReply) => {
    // Body fields win over query fields of the same name.
    const input = {
      ...(request.query as Static<typeof DebugInput>),
      ...((request.body ?? {}) as Static<typeof DebugInput>),
    };
    const client = state.appForAppToken(bearer(request) ?? input.access_token);
    if (!client) return graphError(reply, 400, UNPARSABLE_TOKEN);
    noteCall(request, undefined, client.appId);
    const record = input.input_token ? state.tokens.get(input.input_token) : undefined;
    // Another app's token is reported exactly like one that never existed.
    if (!record || record.appId !== client.appId)
      return {
        data: {
          is_valid: false,
          error: { code: 190, message: 'Invalid OAuth access token.' },
          scopes: [],
        },
      };
    noteCall(request, record.userId, client.appId);
    return { data: inspection(client, record, state.now()) };
  };
  app.get('/debug_token', { schema: debugSchema }, debugToken);
  app.post('/debug_token', { schema: { ...debugSchema, body: DebugInput } }, debugToken);
  app.get('/:version/debug_token', { schema: debugSchema }, debugToken);
  app.post('/:version/debug_token', { schema: { ...debugSchema, body: DebugInput } }, debugToken);
}
