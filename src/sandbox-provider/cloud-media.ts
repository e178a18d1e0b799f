/**
 * Media a person sent, as the Cloud API serves it to the business:
 *
 * - `GET /{version}/{media-id}[?phone_number_id=]` with a live token of the medium's WABA →
 *   `{"messaging_product": "whatsapp", "url", "mime_type", "sha256" (hex), "file_size" (bytes),
 *   "id"}`; the `url` works for `mediaUrlTtlMs` (5 minutes). A medium the sandbox does not have
 *   (never sent, deleted, evicted, or of a WABA the token does not cover) → HTTP 400, code 100,
 *   subcode 33, type `GraphMethodException`; a bad token → 401, code 190.
 * - `DELETE /{version}/{media-id}[?phone_number_id=]` with a live token of the medium's WABA →
 *   `{"success": true}`; the medium is gone (its `GET` and its URL then answer as for one never
 *   sent); one the sandbox does not have (or of another WABA) → HTTP 400, code 100, subcode 33.
 * - `GET /whatsapp_business/attachments/?mid&ext&hash` (the `url`) with `Authorization: Bearer`
 *   and a live token of the medium's WABA → the bytes with their `Content-Type`; no or a bad
 *   token → 401 (code 190); an expired or unknown link or a medium that is gone → 404 (code 100).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#retrieve-media-url
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#download-media
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#delete-media
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { MANAGEMENT, MESSAGING, wabaAccess } from './cloud-auth.ts';
import { wabaOfPhoneNumber } from './cloud-state.ts';
import { liveUserToken } from './graph-auth.ts';
import { GraphError, graphError, type GraphFault } from './graph-errors.ts';
import type { SurfaceOptions } from './surface.ts';
import type { SandboxMedium } from './cloud-media-store.ts';

export const MEDIA_DOWNLOAD_PATH = '/whatsapp_business/attachments/';

const Params = Type.Object({
  version: Type.String({ pattern: '^v[0-9]+\\.[0-9]+$' }),
  mediaId: Type.String({ maxLength: 40 }),
});
const Query = Type.Object({
  phone_number_id: Type.Optional(Type.String({ maxLength: 40 })),
  fields: Type.Optional(Type.String({ maxLength: 200 })),
  access_token: Type.Optional(Type.String({ maxLength: 500 })),
});
const LinkQuery = Type.Object({
  mid: Type.String({ maxLength: 40 }),
  ext: Type.String({ maxLength: 20 }),
  hash: Type.String({ maxLength: 100 }),
});

/** Graph's answer for a node it does not have (or may not show). */
const noSuchMedium = (id: string): GraphFault => ({
  code: 100,
  subcode: 33,
  type: 'GraphMethodException',
  message: `Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
});
const GONE: GraphFault = { code: 100, message: 'The media URL has expired or does not exist' };

/** `http://host:port` as the client addressed the sandbox. */
const origin = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

/**
 * The medium a `/{version}/{media-id}` request names, when the caller may reach it: a live user
 * token (else 401, code 190), a medium the sandbox has, of the `phone_number_id`'s WABA when one
 * is given, that the token covers (else 400, code 100, subcode 33, as for one never sent).
 */
function mediumOf(
  request: FastifyRequest,
  options: SurfaceOptions,
): SandboxMedium | { status: 400 | 401; fault: GraphFault } {
  const { mediaId } = request.params as Static<typeof Params>;
  const live = liveUserToken(request, options);
  if ('fault' in live) return { status: 401, fault: live.fault };
  const medium = options.state.cloud.media.get(mediaId);
  const { phone_number_id: number } = request.query as Static<typeof Query>;
  if (!medium || (number !== undefined && wabaOfPhoneNumber(number) !== medium.wabaId))
    return { status: 400, fault: noSuchMedium(mediaId) };
  const access = wabaAccess(request, options, medium.wabaId, [MESSAGING, MANAGEMENT]);
  if ('fault' in access) return { status: 400, fault: noSuchMedium(mediaId) };
  return medium;
}

/** The media surface. */
export async function cloudMediaRoutes(
  app: FastifyInstance,
  options: SurfaceOptions,
): Promise<void> {
  const { state } = options;
  app.setErrorHandler((_err, _request, reply) =>
    graphError(reply, 400, { code: 100, message: '(#100) Invalid parameter' }),
  );

  app.get(
    '/:version/:mediaId',
    {
      schema: {
        params: Params,
        querystring: Query,
        response: { 200: Type.Record(Type.String(), Type.Unknown()), '4xx': GraphError },
      },
    },
    async (request, reply) => {
      const medium = mediumOf(request, options);
      if ('fault' in medium) return graphError(reply, medium.status, medium.fault);
      const link = state.cloud.media.issueLink(
        medium.id,
        state.now(),
        state.cloud.options.mediaUrlTtlMs,
      );
      const url = new URL(MEDIA_DOWNLOAD_PATH, origin(request));
      for (const [k, v] of Object.entries(link)) url.searchParams.set(k, v);
      return {
        messaging_product: 'whatsapp',
        url: url.href,
        mime_type: medium.mimeType,
        sha256: medium.sha256Hex,
        file_size: medium.bytes.length,
        id: medium.id,
      };
    },
  );

  app.delete(
    '/:version/:mediaId',
    {
      schema: {
        params: Params,
        querystring: Query,
        response: { 200: Type.Object({ success: Type.Boolean() }), '4xx': GraphError },
      },
    },
    async (request, reply) => {
      const medium = mediumOf(request, options);
      if ('fault' in medium) return graphError(reply, medium.status, medium.fault);
      state.cloud.media.delete(medium.id);
      return { success: true };
    },
  );

  app.get(MEDIA_DOWNLOAD_PATH, { schema: { querystring: LinkQuery } }, async (request, reply) => {
    // The download takes the token in the header only (a URL must not carry it).
    if (!request.headers.authorization?.startsWith('Bearer '))
      return graphError(reply, 401, {
        code: 190,
        message: 'An access token is required to request this resource.',
      });
    const live = liveUserToken(request, options);
    if ('fault' in live) return graphError(reply, 401, live.fault);
    const { mid, hash } = request.query as Static<typeof LinkQuery>;
    const medium = state.cloud.media.resolveLink(hash, mid, state.now());
    if (medium === undefined || medium === 'expired') return graphError(reply, 404, GONE);
    const access = wabaAccess(request, options, medium.wabaId, [MESSAGING, MANAGEMENT]);
    if ('fault' in access) return graphError(reply, 404, GONE);
    return reply
      .type(medium.mimeType)
      .header('content-length', medium.bytes.length)
      .header('cache-control', 'private, no-store')
      .send(medium.bytes);
  });
}
