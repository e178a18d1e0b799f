/**
 * A WABA's phone numbers, `GET /{version}/{waba-id}/phone_numbers`: each sandbox WABA has two
 * (stable ids and numbers derived from the WABA id; GREEN, TIER_1K until the account signals
 * of the apps page change them, cloud-signals.ts). Graph's default fields
 * leave `messaging_limit_tier` out; `fields=` names the fields to return, as Graph does.
 * Answers `{"data": […], "paging": {"cursors": {"before", "after"}}}` (one page).
 *
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/manage-phone-numbers
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { MANAGEMENT, MESSAGING, wabaAccess } from './cloud-auth.ts';
import { phoneNumberIdsOf } from './cloud-state.ts';
import { currentNumber } from './cloud-signals.ts';
import { GraphError, graphError } from './graph-errors.ts';
import type { SurfaceOptions } from './surface.ts';

const Params = Type.Object({
  version: Type.String({ pattern: '^v[0-9]+\\.[0-9]+$' }),
  wabaId: Type.String({ maxLength: 40 }),
});
const Query = Type.Object({
  fields: Type.Optional(Type.String({ maxLength: 500 })),
  limit: Type.Optional(Type.String({ maxLength: 5 })),
  after: Type.Optional(Type.String({ maxLength: 200 })),
});

const DEFAULT_FIELDS = [
  'verified_name',
  'code_verification_status',
  'display_phone_number',
  'quality_rating',
  'platform_type',
  'throughput',
  'id',
];

/** The phone numbers surface. */
export async function cloudPhoneNumberRoutes(
  app: FastifyInstance,
  options: SurfaceOptions,
): Promise<void> {
  app.get(
    '/:version/:wabaId/phone_numbers',
    {
      schema: {
        params: Params,
        querystring: Query,
        response: {
          200: Type.Object({ data: Type.Array(Type.Unknown()), paging: Type.Unknown() }),
          '4xx': GraphError,
        },
      },
    },
    async (request, reply) => {
      const { wabaId } = request.params as Static<typeof Params>;
      const access = wabaAccess(request, options, wabaId, [MANAGEMENT, MESSAGING]);
      if ('fault' in access) return graphError(reply, access.status, access.fault);
      const { fields } = request.query as Static<typeof Query>;
      const wanted = fields ? fields.split(',').map((f) => f.trim()) : DEFAULT_FIELDS;
      const data = phoneNumberIdsOf(wabaId).map((id) => {
        const all = currentNumber(options.state, id) as unknown as Record<string, unknown>;
        return Object.fromEntries(
          wanted.filter((f) => f in all && f !== 'digits').map((f) => [f, all[f]]),
        );
      });
      const cursor = (i: number) => Buffer.from(String(i)).toString('base64url');
      return { data, paging: { cursors: { before: cursor(0), after: cursor(data.length - 1) } } };
    },
  );
}
