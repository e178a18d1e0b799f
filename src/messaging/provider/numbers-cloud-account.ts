/**
 * The connected WhatsApp Business account as messaging sees it: the WABA ids of a portal's
 * active connection, a call to the Cloud API through partner's outbound-call path, and what a
 * failed call means to an API client.
 *
 * Invariants: the provider token never reaches this folder: calls go through partner's
 * `withCloudApi`, which binds it inside partner/; a portal without an active
 * connection is refused with `not_connected` before any provider call.
 *
 * @see docs/partner-connection.md "Outbound calls"
 */
import type { BoundCloudApi } from '../../partner/cloud-api/cloud-api.ts';
import type { PartnerService } from '../../partner/partner-service.ts';
import { ConnectionInactiveError, ProviderError } from '../../partner/partner-service.ts';
import { AppError } from '../../platform/errors.ts';

/** What messaging needs of the partner service (narrow, so tests and routes pass just this). */
export type CloudAccountDeps = Pick<PartnerService, 'wabaIdsOf' | 'withCloudApi'>;

export const NOT_CONNECTED_MESSAGE =
  'The portal has no active WhatsApp Business connection; connect it on /settings first.';

/** The portal's WABA ids. @throws AppError `not_connected` when there are none. */
export async function requireWabaIds(partner: CloudAccountDeps, portalId: number) {
  const ids = await partner.wabaIdsOf(portalId);
  if (ids.length === 0) throw new AppError('not_connected', NOT_CONNECTED_MESSAGE);
  return ids;
}

/**
 * Run one Cloud API call for the portal, failures turned into AppErrors (`providerAppError`).
 *
 * @param what names the call in our messages and logs, e.g. `'phone numbers read'`.
 */
export async function callCloud<T>(
  partner: CloudAccountDeps,
  portalId: number,
  what: string,
  fn: (cloud: BoundCloudApi) => Promise<T>,
): Promise<T> {
  try {
    return await partner.withCloudApi(portalId, what, (cloud) => fn(cloud));
  } catch (err) {
    throw providerAppError(err);
  }
}

/**
 * What a failed provider call means to the client: no connection (or a token the provider
 * declared dead, which has revoked it) → 409 `not_connected`; a timeout → 504
 * `provider_timeout`; Graph's "invalid parameter" (100) → 400 `invalid_request`, its "already
 * exists" (100/2388024) → 409 `conflict`, its "not found" (100/2593002, 100/33) → 404
 * `not_found`; anything else → 502 `provider_error`. Non-provider errors pass unchanged.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 */
export function providerAppError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (err instanceof ConnectionInactiveError)
    return new AppError('not_connected', NOT_CONNECTED_MESSAGE, { cause: err });
  if (!(err instanceof ProviderError)) return err;
  const cause = { cause: err };
  if (err.kind === 'dead_token')
    return new AppError(
      'not_connected',
      'The provider no longer accepts the connection (it was revoked); connect again on /settings.',
      cause,
    );
  if (err.kind === 'unavailable' && /did not answer/.test(err.message))
    return new AppError(
      'provider_timeout',
      'The provider did not answer in time; retry later.',
      cause,
    );
  if (err.kind === 'permission')
    return new AppError(
      'provider_error',
      'The connection lacks the permission to manage the WhatsApp Business account; connect again granting it.',
      cause,
    );
  if (err.graphCode === 100 && err.graphSubcode === 2388024)
    return new AppError(
      'conflict',
      'A template with this name and language already exists.',
      cause,
    );
  if (err.graphCode === 100 && (err.graphSubcode === 2593002 || err.graphSubcode === 33))
    return new AppError('not_found', 'The provider has no such object for this account.', cause);
  if (err.graphCode === 100)
    return new AppError(
      'invalid_request',
      'The provider refused a parameter of the request (Graph error 100).',
      cause,
    );
  return new AppError(
    'provider_error',
    `The provider failed the call (${err.kind}${err.graphCode ? `, Graph error ${err.graphCode}` : ''}); retry later.`,
    cause,
  );
}
