/**
 * What a provider failure means to an API client: messaging's one translation of partner's
 * errors (ConnectionInactiveError, ProviderError) into the API's error codes, and its one
 * `not_connected` refusal.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 * @see docs/messaging.md "The provider"
 */
import { ConnectionInactiveError } from '../../partner/connections-store.ts';
import { ProviderError } from '../../partner/provider-error.ts';
import { AppError } from '../../platform/errors.ts';

/** The message of every `not_connected` refusal of messaging. */
export const NOT_CONNECTED_MESSAGE =
  'The portal has no active WhatsApp Business connection; connect it on /settings first.';

/** The refusal of a portal without an active connection holding a WABA: 409 `not_connected`. */
export function notConnected(options?: { cause: unknown }): AppError {
  return new AppError('not_connected', NOT_CONNECTED_MESSAGE, options);
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
  if (err instanceof ConnectionInactiveError) return notConnected({ cause: err });
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
