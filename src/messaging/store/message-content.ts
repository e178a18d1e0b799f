/**
 * A message's content at rest, in both directions: the JSON of what the message says (a text, a
 * template's parameters, an inbound message's type-specific object) sealed with the keyring
 * (AES-256-GCM), the portal id and the message id bound as associated data, so a database dump
 * shows no conversation and a content copied to another message or portal never opens.
 *
 * Stored in `messages.content` (`SealedValue`, jsonb), both directions; null once
 * the retention period passed or the contact was erased.
 *
 * @see docs/messaging.md "Content at rest"
 */
import {
  DecryptionError,
  type Keyring,
  type SealedValue,
  type SealPurpose,
} from '../../platform/keyring.ts';
import type {
  InboundContent,
  InboundReferral,
} from '../../partner/cloud-api/provider-webhook-events.ts';
import type { TemplateComponentSend } from '../templates/template-send.ts';
import type { SendMessageBody } from './send-kinds-schemas.ts';

const PURPOSE: SealPurpose = 'message-content';

/** The kinds a send takes (`type`). */
export type SendKind = SendMessageBody['type'];

/** The object of kind `K` as the API accepted it (camelCase, our `med_…` and `msg_…` ids). */
export type KindObject<K extends SendKind> =
  Extract<SendMessageBody, { type: K }> extends infer B
    ? B extends Record<K, infer O>
      ? O
      : never
    : never;

/**
 * What an outbound message says: the API's object of its kind, keyed by kind, as accepted (our
 * `med_…` and `msg_…` ids, mapped to the provider's when it is sent), and the message it
 * quotes. A template keeps its parameters as the send gave them (the body
 * shorthand and the components, template-send.ts; name and language are columns).
 */
export type OutboundContent = {
  [K in Exclude<SendKind, 'template'>]?: KindObject<K>;
} & {
  template?: { parameters: string[]; components?: TemplateComponentSend[] };
  context?: { messageId: string };
};

/**
 * What an inbound message says: its type's content, what its `context` says that is personal
 * (who wrote the quoted message, whether it was forwarded, often), and the click-to-WhatsApp ad
 * it came from (`referral`: its click id ties the person to the ad). The wamids it names are
 * metadata, kept in the row.
 */
export type StoredInboundContent = InboundContent & {
  context?: { from?: string; forwarded?: boolean; frequentlyForwarded?: boolean };
  referral?: InboundReferral;
};

/** The keyring's two calls a content needs (a keyring, or a test's). */
export type ContentKeyring = Pick<Keyring, 'seal' | 'open'>;

/**
 * Seal `content` (any JSON value) for message `messageId` of `portalId`.
 *
 * @returns the sealed value to store, under the keyring's active key.
 */
export function sealContent(
  keyring: ContentKeyring,
  portalId: number,
  messageId: string,
  content: OutboundContent | StoredInboundContent,
): SealedValue {
  return keyring.seal(JSON.stringify(content), portalId, PURPOSE, messageId);
}

/**
 * Open the content sealed for message `messageId` of `portalId`.
 *
 * @returns the content, or null when none is stored (expired or erased).
 * @throws DecryptionError when it was sealed for another message or portal, was tampered with, or
 *   its key is unknown (the error never carries the content).
 */
export function openContent<T extends OutboundContent | StoredInboundContent>(
  keyring: ContentKeyring,
  portalId: number,
  messageId: string,
  sealed: SealedValue | null,
): T | null {
  if (sealed === null) return null;
  const json = keyring.open(sealed, portalId, PURPOSE, messageId);
  try {
    return JSON.parse(json) as T;
  } catch (cause) {
    throw Object.assign(new DecryptionError('The stored content is not JSON.'), { cause });
  }
}
