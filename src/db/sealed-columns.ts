/**
 * The registry of every value sealed with the keyring at rest (docs/security.md "Security invariants",
 * 11: every sealed value rotates with `keys rotate`). Each entry says where a sealed value lives (table, columns),
 * which row it belongs to (key, portal) and what it was sealed for (purpose, subject), so one
 * engine (db/sealing.ts) re-seals, counts and checks all of them. A new sealed column is one
 * entry here. Every sealed value has one shape, a `SealedValue` (`{ciphertext, iv, tag, keyId}`)
 * stored as jsonb, in one of two places:
 *
 * - `jsonbSealed`: a jsonb column holding it;
 * - `jsonbSealedField`: a field of a jsonb column holding it (an event payload's `sealedData`).
 *
 * An entry may also name the values of its rows still stored in clear (`clear`): the start-up
 * pass and `keys rotate` seal them.
 *
 * @see docs/how-to/rotate-keys.md
 * @see docs/security.md
 */
import { sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { SealedValue, SealPurpose } from '../platform/keyring.ts';
import {
  campaigns,
  connections,
  conversationNotes,
  media,
  messageDrafts,
  messages,
  numberOnboarding,
  webhookEndpoints,
  webhookEvents,
} from './schema/index.ts';

/** One sealed value's place: what the engine reads and writes. */
export interface SealedColumn {
  /** `table.column` (or `table.column.field`): how progress, checks and refusals name it. */
  name: string;
  table: PgTable;
  /** The row's unique key: batches walk it in order, updates find the row by it. */
  key: AnyPgColumn;
  portalId: AnyPgColumn;
  purpose: SealPurpose;
  /** Whether the row key is bound as the seal's subject (`keyring.seal`'s `subject`). */
  subjectIsKey: boolean;
  /** The sealed value as jsonb (`{ciphertext, iv, tag, keyId}`); null when the row holds none. */
  sealed: SQL;
  /** Its key id (text); null when the row holds none. */
  keyId: SQL;
  /** Its ciphertext (text): the guard of an update (a concurrent write is never overwritten). */
  ciphertext: SQL;
  /** The rows whose value is still opened (e.g. a previous webhook secret inside its overlap). */
  live?: () => SQL;
  /** The SET list storing `sealed` in the row. */
  store(sealed: SealedValue): SQL;
  /**
   * Values still stored in clear: which rows (`where`), the plaintext to seal (text), and the
   * SET list that forgets the clear value once the sealed one is stored.
   */
  clear?: { where: SQL; plaintext: SQL; forget: SQL };
}

type Place = Pick<SealedColumn, 'table' | 'key' | 'portalId' | 'purpose' | 'subjectIsKey'> &
  Pick<SealedColumn, 'live' | 'clear'>;

const json = (sealed: SealedValue) => sql`${JSON.stringify(sealed)}::jsonb`;

/** A jsonb column holding a `SealedValue`. */
export function jsonbSealed(column: AnyPgColumn, place: Place): SealedColumn {
  return {
    ...place,
    name: `${tableName(place.table)}.${column.name}`,
    sealed: sql`${column}`,
    keyId: sql`(${column} ->> 'keyId')`,
    ciphertext: sql`(${column} ->> 'ciphertext')`,
    store: (sealed) => sql`${sql.identifier(column.name)} = ${json(sealed)}`,
  };
}

/** Field `field` of a jsonb column, holding a `SealedValue`. */
export function jsonbSealedField(column: AnyPgColumn, field: string, place: Place): SealedColumn {
  return {
    ...place,
    name: `${tableName(place.table)}.${column.name}.${field}`,
    sealed: sql`(${column} -> ${field})`,
    keyId: sql`(${column} -> ${field} ->> 'keyId')`,
    ciphertext: sql`(${column} -> ${field} ->> 'ciphertext')`,
    store: (sealed) =>
      sql`${sql.identifier(column.name)} = jsonb_set(${column}, array[${field}]::text[], ${json(sealed)})`,
  };
}

function tableName(table: PgTable): string {
  // drizzle keeps a table's SQL name under this well-known symbol.
  return (table as unknown as Record<symbol, string>)[Symbol.for('drizzle:Name')] ?? 'table';
}

const e = webhookEndpoints;

/**
 * Every sealed value of the database, in the order `keys rotate` re-seals them. One line per
 * value; add the next one here.
 */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  jsonbSealed(connections.token, {
    table: connections,
    key: connections.portalId,
    portalId: connections.portalId,
    purpose: 'connection',
    subjectIsKey: false,
  }),
  jsonbSealed(e.secret, {
    table: e,
    key: e.id,
    portalId: e.portalId,
    purpose: 'webhook-secret',
    subjectIsKey: false,
  }),
  // A previous secret past its overlap is never opened again: it neither rotates nor blocks.
  jsonbSealed(e.previousSecret, {
    table: e,
    key: e.id,
    portalId: e.portalId,
    purpose: 'webhook-secret',
    subjectIsKey: false,
    live: () => sql`${e.previousSecretExpiresAt} > now()`,
  }),
  jsonbSealed(messages.content, {
    table: messages,
    key: messages.id,
    portalId: messages.portalId,
    purpose: 'message-content',
    subjectIsKey: true,
  }),
  jsonbSealed(media.fileName, {
    table: media,
    key: media.id,
    portalId: media.portalId,
    purpose: 'message-content',
    subjectIsKey: true,
  }),
  jsonbSealedField(webhookEvents.payload, 'sealedData', {
    table: webhookEvents,
    key: webhookEvents.id,
    portalId: webhookEvents.portalId,
    purpose: 'webhook-event',
    subjectIsKey: true,
  }),
  jsonbSealed(numberOnboarding.pin, {
    table: numberOnboarding,
    key: numberOnboarding.id,
    portalId: numberOnboarding.portalId,
    purpose: 'registration-pin',
    subjectIsKey: true,
  }),
  jsonbSealed(conversationNotes.body, {
    table: conversationNotes,
    key: conversationNotes.id,
    portalId: conversationNotes.portalId,
    purpose: 'conversation-note',
    subjectIsKey: true,
  }),
  jsonbSealed(messageDrafts.content, {
    table: messageDrafts,
    key: messageDrafts.id,
    portalId: messageDrafts.portalId,
    purpose: 'message-draft',
    subjectIsKey: true,
    // Drafts stored before they were sealed: `message` and `recipients` in clear.
    clear: {
      where: sql`${messageDrafts.content} is null and ${messageDrafts.message} is not null`,
      plaintext: sql`jsonb_build_object('message', ${messageDrafts.message}, 'recipients', ${messageDrafts.recipients})::text`,
      forget: sql`"message" = null, "recipients" = null`,
    },
  }),
  jsonbSealed(campaigns.content, {
    table: campaigns,
    key: campaigns.id,
    portalId: campaigns.portalId,
    purpose: 'campaign-template',
    subjectIsKey: true,
  }),
];
