/**
 * An outbound webhook event's payload at rest: the `{type, timestamp, data}` object sent to
 * receivers, stored in `webhook_events.payload` as `{type, timestamp, sealedData}` where
 * `sealedData` is the JSON of `data` sealed with the keyring (AES-256-GCM, purpose
 * `webhook-event`, the portal id and the event id bound as associated data). `message.received`
 * and `message.reaction` carry what a person wrote; every type is sealed, so there is one path and
 * a database dump shows no event's data. A payload stored with a plain `data` (written before
 * events were sealed) is read as it is.
 *
 * @see docs/webhooks.md "Events at rest"
 */
import { randomBase62 } from '../platform/crypto.ts';
import {
  DecryptionError,
  type Keyring,
  type SealedValue,
  type SealPurpose,
} from '../platform/keyring.ts';

const PURPOSE: SealPurpose = 'webhook-event';

/** The payload as sent: Standard Webhooks' `{type, timestamp, data}`. */
export interface EventPayload {
  type: string;
  /** ISO 8601, UTC. */
  timestamp: string;
  data: Record<string, unknown>;
}

/** The payload as stored: `data` sealed. */
export interface SealedEventPayload {
  type: string;
  timestamp: string;
  sealedData: SealedValue;
}

/** The keyring's two calls an event payload needs. */
export type EventKeyring = Pick<Keyring, 'seal' | 'open'>;

function isSealedValue(value: unknown): value is SealedValue {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return ['ciphertext', 'iv', 'tag', 'keyId'].every((k) => typeof v[k] === 'string');
}

/**
 * Seal `payload.data` for event `eventId` of `portalId`.
 *
 * @returns the object to store in `webhook_events.payload`.
 */
export function sealEventPayload(
  keyring: EventKeyring,
  portalId: number,
  eventId: string,
  payload: EventPayload,
): SealedEventPayload {
  return {
    type: payload.type,
    timestamp: payload.timestamp,
    sealedData: keyring.seal(JSON.stringify(payload.data), portalId, PURPOSE, eventId),
  };
}

/**
 * The payload to send for event `eventId` of `portalId`, from what is stored: sealed data is
 * opened, a plain `data` is returned as it is.
 *
 * @throws DecryptionError when the data was sealed for another event or portal, was tampered
 *   with, or its key is unknown (the error never carries the data).
 */
export function openEventPayload(
  keyring: EventKeyring,
  portalId: number,
  eventId: string,
  stored: Record<string, unknown>,
): EventPayload {
  const type = String(stored.type);
  const timestamp = String(stored.timestamp);
  if (!isSealedValue(stored.sealedData)) {
    return { type, timestamp, data: (stored.data ?? {}) as Record<string, unknown> };
  }
  const json = keyring.open(stored.sealedData, portalId, PURPOSE, eventId);
  try {
    return { type, timestamp, data: JSON.parse(json) as Record<string, unknown> };
  } catch (cause) {
    throw Object.assign(new DecryptionError('The stored event data is not JSON.'), { cause });
  }
}

/** A new `webhook_events` row: a fresh `evt_` id, the payload sealed, whom it is about. */
export interface NewEventRow {
  id: string;
  portalId: number;
  type: string;
  payload: Record<string, unknown>;
  /** The data's `contactId`, when a string: kept plain so a contact's erasure finds it. */
  contactId: string | null;
  /** The data's `from` (the person's phone, E.164), when a string; same reason. */
  contactPhone: string | null;
}

/**
 * The row of a new event of `type` with `data`, its data sealed under a fresh event id.
 *
 * @param timestamp ISO 8601, UTC: the payload's `timestamp`.
 */
export function newEventRow(
  keyring: EventKeyring,
  portalId: number,
  type: string,
  timestamp: string,
  data: object,
): NewEventRow {
  const id = `evt_${randomBase62(16)}`;
  const sealed = sealEventPayload(keyring, portalId, id, { type, timestamp, data: { ...data } });
  const d = data as Record<string, unknown>;
  return {
    id,
    portalId,
    type,
    payload: { ...sealed },
    contactId: typeof d.contactId === 'string' ? d.contactId : null,
    contactPhone: typeof d.from === 'string' ? d.from : null,
  };
}
