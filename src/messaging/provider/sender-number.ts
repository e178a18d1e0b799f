/**
 * The sender number of a send or an upload, chosen among the connected account's numbers.
 *
 * @see docs/messaging.md "Sending"
 */
import { AppError } from '../../platform/errors.ts';
import type { PhoneNumber } from './provider-adapter.ts';

const invalid = (field: string, message: string, text = `\`${field}\` ${message}.`) =>
  new AppError('invalid_request', text, { details: [{ field: `body.${field}`, message }] });

/**
 * The sender: a phone number id of the account and the WABA it belongs to; `from` may be left
 * out when the account has one number. `field` names the input in a refusal (`from`, or an
 * upload's `phoneNumberId`).
 *
 * @throws AppError `invalid_request` naming `field`, `not_connected`, `provider_error`,
 *   `provider_timeout`.
 */
export function senderOf(
  numbers: readonly PhoneNumber[],
  from: string | undefined,
  field = 'from',
): PhoneNumber {
  if (from !== undefined) {
    const number = numbers.find((n) => n.id === from);
    if (!number)
      throw invalid(
        field,
        'is not a phone number id of the connected account (GET /messaging/numbers)',
      );
    return number;
  }
  if (numbers.length === 1) return numbers[0]!;
  if (numbers.length === 0)
    throw invalid(
      field,
      'cannot be chosen: the connected account has no phone number',
      'The connected account has no phone number to send from.',
    );
  throw invalid(
    field,
    'is required: the connected account has several phone numbers (GET /messaging/numbers)',
  );
}
