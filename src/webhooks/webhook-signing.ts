/**
 * Signing secrets and signatures, with the Standard Webhooks reference library. A secret is
 * `whsec_` + base64 of 32 random bytes (the spec asks for 24–64). During a rotation the
 * `webhook-signature` header carries one `v1,<base64>` signature per live secret, separated by a
 * space, so a receiver verifies with either secret for the overlap.
 *
 * @see https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#signature-scheme
 * @see docs/how-to/webhook-receiver.md
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** Bytes of a new signing secret. */
const SECRET_BYTES = 32;

/** A new signing secret, `whsec_…` (shown once; stored sealed). */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The three Standard Webhooks headers of one attempt. */
export interface SignedHeaders {
  'webhook-id': string;
  /** Unix time, in seconds. */
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Sign `body` for `messageId` at `at` with every secret given (current first).
 *
 * @param secrets one or two `whsec_…` secrets; at least one.
 * @throws Error when no secret is given.
 */
export function signDelivery(
  messageId: string,
  at: Date,
  body: string,
  secrets: readonly string[],
): SignedHeaders {
  if (secrets.length === 0) throw new Error('No signing secret.');
  const signatures = secrets.map((s) => new Webhook(s).sign(messageId, at, body));
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
