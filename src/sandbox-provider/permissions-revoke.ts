/**
 * Revoking an app's permissions, `DELETE /{version}/{user-id}/permissions` (or `/me/permissions`)
 * with the person's token as `Authorization: Bearer {token}`: the grant is removed and every
 * token of that person for the app stops working (later calls answer error 190/460), as when the
 * person removes the app themselves — but no deauthorize callback is sent, since the app asked.
 * Answers `{"success": true}`.
 *
 * A dead token gets a Graph error (400, 190; see `liveUserToken`); a user id other than the
 * token's person gets code 100 (HTTP 400), and nothing is removed.
 *
 * @see https://developers.facebook.com/docs/facebook-login/guides/permissions/request-revoke#revoking
 * @see https://developers.facebook.com/docs/graph-api/reference/user/permissions/#Deleting
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { liveUserToken } from './graph-auth.ts';
import { GraphError, graphError } from './graph-errors.ts';
import type { SurfaceOptions } from './surface.ts';

const Params = Type.Object({
  version: Type.String({ pattern: '^v[0-9]+\\.[0-9]+$' }),
  userId: Type.String({ pattern: '^(me|[0-9]{1,30})$' }),
});

/** The permissions-revocation surface. */
export async function permissionsRevokeRoutes(
  app: FastifyInstance,
  options: SurfaceOptions,
): Promise<void> {
  app.delete(
    '/:version/:userId/permissions',
    {
      schema: {
        params: Params,
        response: { 200: Type.Object({ success: Type.Boolean() }), 400: GraphError },
      },
    },
    async (request, reply) => {
      const live = liveUserToken(request, options);
      if ('fault' in live) return graphError(reply, 400, live.fault);
      const { userId } = request.params as { userId: string };
      const { record } = live;
      if (userId !== 'me' && userId !== record.userId) {
        return graphError(reply, 400, {
          code: 100,
          message: '(#100) The access token does not belong to this user.',
        });
      }
      options.state.removeGrant(record.appId, record.userId);
      return { success: true };
    },
  );
}
