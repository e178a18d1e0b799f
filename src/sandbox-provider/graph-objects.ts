/**
 * Graph nodes read with a person's token: `GET /{version}/me` answers `{"id", "name"}` of the
 * person whose token it is (`fields` is accepted and ignored). A dead token gets a Graph error
 * (400, code 190; see `liveUserToken`).
 *
 * This is the pattern for every further Graph surface: a plugin that authenticates with
 * `liveUserToken`, answers failures with `graphError`, reads `SandboxState`, and is listed in
 * `SURFACES` in sandbox-provider.tsx. A family of nodes with its own product (the WhatsApp Cloud
 * API's phone numbers, message templates and messages) goes in a file of its own beside this one.
 *
 * @see https://developers.facebook.com/docs/graph-api/reference/user
 * @see https://developers.facebook.com/docs/graph-api
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { liveUserToken } from './graph-auth.ts';
import { GraphError, graphError } from './graph-errors.ts';
import { VersionParams, type SurfaceOptions } from './surface.ts';

const Me = Type.Object({ id: Type.String(), name: Type.String() });

/** The Graph nodes surface. */
export async function graphObjectRoutes(
  app: FastifyInstance,
  options: SurfaceOptions,
): Promise<void> {
  app.get(
    '/:version/me',
    {
      schema: {
        params: VersionParams,
        querystring: Type.Object({ fields: Type.Optional(Type.String({ maxLength: 200 })) }),
        response: { 200: Me, 400: GraphError },
      },
    },
    async (request, reply) => {
      const live = liveUserToken(request, options);
      if ('fault' in live) return graphError(reply, 400, live.fault);
      return { id: live.record.userId, name: `Sandbox person ${live.record.userId}` };
    },
  );
}
