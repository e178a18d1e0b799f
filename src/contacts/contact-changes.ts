/**
 * From input to stored columns and back: the response shape of a row, the columns an upsert
 * or an import changes, and a JSON merge patch (RFC 7396) applied to a row.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7396
 */
import { sql } from 'drizzle-orm';
import type { CONSENT_SOURCES } from '../db/schema/contacts.ts';
import { AppError } from '../platform/errors.ts';
import {
  ATTRIBUTES_MAX,
  type Contact,
  type ContactFields,
  type PatchContactBody,
} from './contact-schemas.ts';
import type { ContactChanges, ContactRow, FieldChanges } from './contacts-repository.ts';

export type ConsentSource = (typeof CONSENT_SOURCES)[number];
/** The writable fields other than phone, as validated. */
export type ContactData = Omit<ContactFields, 'phone'>;
type Attributes = Record<string, string | number | boolean>;

export function toContact(row: ContactRow): Contact {
  return {
    id: row.id,
    phone: row.phone,
    waUserId: row.waUserId,
    parentWaUserId: row.parentWaUserId,
    username: row.username,
    profileName: row.profileName,
    email: row.email,
    firstName: row.firstName,
    lastName: row.lastName,
    attributes: row.attributes,
    tags: row.tags,
    consent: {
      whatsapp: row.consentWhatsapp,
      updatedAt: row.consentUpdatedAt.toISOString(),
      source: row.consentSource,
    },
    lastInboundAt: row.lastInboundAt ? row.lastInboundAt.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The columns of a new contact from validated fields (phone already E.164). */
export function newContactColumns(phone: string, data: ContactData, source: ConsentSource) {
  return {
    phone,
    email: data.email ?? null,
    firstName: data.firstName ?? null,
    lastName: data.lastName ?? null,
    attributes: data.attributes ?? {},
    tags: data.tags ?? [],
    consentWhatsapp: data.consent?.whatsapp ?? 'unknown',
    consentSource: source,
  } as const;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function sameAttributes(a: Attributes, b: Attributes): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.is(a[k], b[k]));
}

/**
 * What an upsert or import row changes on an existing contact: each field it carries replaces
 * the stored one; fields it leaves out stay. A consent change stamps its time and source.
 *
 * @returns the changed columns, or null when nothing differs (the row stays untouched).
 */
export function upsertChanges(
  row: ContactRow,
  data: ContactData,
  source: ConsentSource,
): FieldChanges | null {
  const changes: FieldChanges = {};
  if (data.email !== undefined && data.email !== row.email) changes.email = data.email;
  if (data.firstName !== undefined && data.firstName !== row.firstName) {
    changes.firstName = data.firstName;
  }
  if (data.lastName !== undefined && data.lastName !== row.lastName) {
    changes.lastName = data.lastName;
  }
  if (data.attributes !== undefined && !sameAttributes(data.attributes, row.attributes)) {
    changes.attributes = data.attributes;
  }
  if (data.tags !== undefined && !sameJson(data.tags, row.tags)) changes.tags = data.tags;
  const consent = data.consent?.whatsapp;
  if (consent !== undefined && consent !== row.consentWhatsapp) {
    Object.assign(changes, consentChange(consent, source));
  }
  return Object.keys(changes).length > 0 ? changes : null;
}

function consentChange(state: ContactRow['consentWhatsapp'], source: ConsentSource) {
  return { consentWhatsapp: state, consentUpdatedAt: sql`now()`, consentSource: source };
}

/**
 * A JSON merge patch applied to a row: `null` removes a field (an attribute, with `null` as
 * its value); `attributes` merges key by key. Phone is handled by the caller (uniqueness).
 *
 * @throws AppError `invalid_request` when the merged attributes exceed 50 keys.
 * @see https://www.rfc-editor.org/rfc/rfc7396#section-2
 */
export function patchChanges(
  row: ContactRow,
  patch: Omit<PatchContactBody, 'phone'>,
  source: ConsentSource,
): ContactChanges {
  const changes: ContactChanges = {};
  if (patch.email !== undefined) changes.email = patch.email;
  if (patch.firstName !== undefined) changes.firstName = patch.firstName;
  if (patch.lastName !== undefined) changes.lastName = patch.lastName;
  if (patch.tags !== undefined) changes.tags = patch.tags ?? [];
  if (patch.attributes !== undefined) {
    const merged: Attributes = patch.attributes === null ? {} : { ...row.attributes };
    for (const [key, value] of Object.entries(patch.attributes ?? {})) {
      if (value === null) delete merged[key];
      else merged[key] = value;
    }
    if (Object.keys(merged).length > ATTRIBUTES_MAX) {
      throw new AppError('invalid_request', 'The request is not valid; see details.', {
        details: [
          {
            field: 'body.attributes',
            message: `would hold more than ${ATTRIBUTES_MAX} attributes after the merge`,
          },
        ],
      });
    }
    changes.attributes = merged;
  }
  const consent = patch.consent?.whatsapp;
  if (consent !== undefined && consent !== row.consentWhatsapp) {
    Object.assign(changes, consentChange(consent, source));
  }
  return changes;
}
