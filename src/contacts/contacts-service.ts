/**
 * CRM contacts: create (idempotent), upsert by phone, read, merge-patch, erase (GDPR art. 17),
 * list (cursor pages with filters) and import, always within the principal's portal.
 *
 * The pieces: queries in contacts-repository.ts (each filters by portal id), input → columns in
 * contact-changes.ts, the import in contact-import.ts, phones in phone.ts. `Idempotency-Key`
 * handling is idempotency/'s (one table, one semantics; the fingerprint names the route).
 *
 * @see docs/decisions/0015-contacts.md
 */
import type { Principal } from '../accounts/principal.ts';
import { recordAuditEvent, type Actor } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import { keysetCursor } from '../api-kit/keyset-cursor.ts';
import { isUniqueViolation } from '../platform/database-errors.ts';
import { newContactId } from './contact-id.ts';
import { recordInitialConsent, runConsentSteps, type OptedOutStep } from './consent-steps.ts';
import { readConsentHistory, toConsentChange } from './consent-history.ts';
import type { ErasedPerson } from '../platform/erased-person.ts';
import { AppError } from '../platform/errors.ts';
import type { Logger } from '../platform/logger.ts';
import { claimOrReplay, requestFingerprint } from '../idempotency/idempotency-keys.ts';
import {
  tombstoneStoredResponsesNaming,
  saveIdempotentResponse,
} from '../idempotency/idempotency-repository.ts';
import {
  newContactColumns,
  patchChanges,
  toContact,
  upsertChanges,
  type ConsentSource,
  type ContactData,
} from './contact-changes.ts';
import { importContacts, type ImportResult } from './contact-import.ts';
import type {
  Contact,
  ContactDetail,
  ContactFields,
  ListContactsQuery,
  PatchContactBody,
} from './contact-schemas.ts';
import { listFilter } from './contact-filter.ts';
import * as repo from './contacts-repository.ts';
import { normalisePhone } from './phone.ts';

export const contactCursor = keysetCursor(/^ctc_[0-9A-Za-z]{1,60}$/);

export type { ImportResult } from './contact-import.ts';

/** What one erasure step did: `count` rows of `what`, deleted, anonymised or failed. */
export interface ErasureCount {
  kind: 'erased' | 'anonymised' | 'failed';
  what: string;
  count: number;
}

/**
 * One step of an erasure, run in its transaction before the contact row goes (so the rows
 * linked to the contact are still linked): another feature (messaging) removes or anonymises
 * what names the person, by contact id or phone, and says how many rows it touched.
 */
export type ErasureStep = (
  tx: repo.Tx,
  contact: ErasedPerson,
) => Promise<ErasureCount | ErasureCount[]>;

/** What an erasure removed, stripped of the person and stopped (queued messages), by kind. */
export interface Erasure {
  id: string;
  erasedAt: string;
  erased: Record<string, number>;
  anonymised: Record<string, number>;
  failed: Record<string, number>;
}

export interface ContactsServiceDeps {
  db: Database;
  logger: Logger;
  /** Steps other features add to an erasure (none until messaging exists). */
  erasureSteps?: readonly ErasureStep[];
  /** Steps other features add to an opt-out (webhooks' `contact.opted_out`). */
  optedOutSteps?: readonly OptedOutStep[];
}

type PortalOf = Pick<Principal, 'portalId'>;

/** Contacts of one portal at a time: every method is scoped to the principal's portal. */
export interface ContactsService {
  /**
   * Create a contact, or replay the first response of an earlier request with the same key.
   *
   * @returns status 201 and the contact, or the stored first response with `replayed: true`.
   * @throws AppError `invalid_request` (details `body.phone`) for a phone that does not parse;
   *   `conflict` (409, the existing id in `details`) when the portal has the phone;
   *   `idempotency_conflict` for a reused key with another body.
   */
  createContact(args: {
    principal: PortalOf;
    input: ContactFields;
    idempotencyKey?: string | undefined;
  }): Promise<{ status: number; body: { success: true; data: Contact }; replayed: boolean }>;

  /**
   * Upsert by phone: create (201) or set the fields given, leaving the others (200).
   *
   * @throws AppError `invalid_request` (details `params.phone`) for a phone that does not parse.
   */
  upsertByPhone(
    principal: PortalOf,
    phone: string,
    data: ContactData,
  ): Promise<{ created: boolean; contact: Contact }>;

  /** A contact and its newest consent changes. @throws AppError `not_found` (any other id). */
  getContact(principal: PortalOf, id: string): Promise<ContactDetail>;

  /**
   * Apply a JSON merge patch (RFC 7396).
   *
   * @throws AppError `not_found`; `conflict` when the new phone is another contact's;
   *   `invalid_request` for a bad phone or over 50 merged attributes.
   */
  patchContact(principal: PortalOf, id: string, patch: PatchContactBody): Promise<Contact>;

  /**
   * Erase a contact (GDPR art. 17): delete the row, turn the stored responses naming it into
   * tombstones (a replay answers as before, without the person), run the other features'
   * erasure steps, audit `contact.erased` (the id only), all in one
   * transaction.
   *
   * @throws AppError `not_found` for an unknown id and another portal's alike.
   * @see https://gdpr-info.eu/art-17-gdpr/
   */
  eraseContact(
    principal: PortalOf,
    id: string,
    context: { actor: Actor; requestId?: string | undefined },
  ): Promise<Erasure>;

  /**
   * A page of contacts, newest first, filtered.
   *
   * @throws AppError `invalid_request` for a cursor this service did not produce.
   */
  listContacts(
    principal: PortalOf,
    query: { [K in keyof ListContactsQuery]: ListContactsQuery[K] | undefined } & { limit: number },
  ): Promise<{ items: Contact[]; nextCursor: string | null }>;

  /** Import rows; see contact-import.ts. */
  importContacts(
    principal: PortalOf,
    rows: readonly unknown[],
    source: ConsentSource,
  ): Promise<ImportResult>;
}

function notFound(): AppError {
  return new AppError('not_found', 'No contact with this id.');
}

function phoneOrThrow(input: string, field: string): string {
  const result = normalisePhone(input);
  if (result.ok) return result.e164;
  throw new AppError('invalid_request', `The phone ${result.message}.`, {
    details: [{ field, message: result.message }],
  });
}

function phoneTaken(id: string, field: string): AppError {
  return new AppError('conflict', 'A contact with this phone already exists in the portal.', {
    details: [{ field, message: 'is already the phone of another contact', id }],
  });
}

async function createContact(
  db: Database,
  logger: Logger,
  { principal, input, idempotencyKey }: Parameters<ContactsService['createContact']>[0],
): ReturnType<ContactsService['createContact']> {
  const { phone: rawPhone, ...data } = input;
  const phone = phoneOrThrow(rawPhone, 'body.phone');
  const requestHash = requestFingerprint('POST /crm/contacts', { phone, ...data });
  const result = await db.transaction(async (tx) => {
    if (idempotencyKey !== undefined) {
      const first = await claimOrReplay(tx, principal.portalId, idempotencyKey, requestHash);
      if (first) {
        const body = first.body as { success: true; data: Contact };
        return { status: first.status, body, replayed: true };
      }
    }
    const row = await repo.insertContactIfNew(tx, {
      id: newContactId(),
      portalId: principal.portalId,
      ...newContactColumns(phone, data, 'api'),
    });
    if (!row) {
      const existing = await repo.findContactBy(tx, principal.portalId, { phone });
      throw phoneTaken(existing?.id ?? 'unknown', 'body.phone');
    }
    await recordInitialConsent(tx, [row]);
    const created = { status: 201, body: { success: true as const, data: toContact(row) } };
    if (idempotencyKey !== undefined) {
      await saveIdempotentResponse(tx, principal.portalId, idempotencyKey, created);
    }
    return { ...created, replayed: false };
  });
  return result;
}

async function eraseContact(
  deps: Required<ContactsServiceDeps>,
  principal: PortalOf,
  id: string,
  { actor, requestId }: { actor: Actor; requestId?: string | undefined },
): Promise<Erasure> {
  const { db, logger, erasureSteps } = deps;
  const erasure = await db.transaction(async (tx) => {
    const row = await repo.findContactBy(tx, principal.portalId, { id });
    if (!row) throw notFound();
    const result: Erasure = {
      id,
      erasedAt: new Date().toISOString(),
      erased: { contact: 0 },
      anonymised: { storedResponses: 0 },
      failed: {},
    };
    for (const step of erasureSteps) {
      for (const { kind, what, count } of [await step(tx, row)].flat())
        result[kind][what] = (result[kind][what] ?? 0) + count;
    }
    // A concurrent erasure of the same contact deleted it first: this one changes nothing.
    if (!(await repo.deleteContact(tx, principal.portalId, id))) throw notFound();
    result.erased.contact = 1;
    result.anonymised.storedResponses = await tombstoneStoredResponsesNaming(tx, row);
    // The id only: the audit log never holds the person's data.
    await recordAuditEvent(tx, {
      portalId: principal.portalId,
      actor,
      action: 'contact.erased',
      reason: `Contact ${id} erased on request (GDPR art. 17).`,
      requestId: requestId ?? null,
    });
    return result;
  });
  logger.info({ portalId: principal.portalId, contactId: id }, 'contact erased');
  return erasure;
}

export function createContactsService({
  db,
  logger,
  erasureSteps = [],
  optedOutSteps = [],
}: ContactsServiceDeps): ContactsService {
  return {
    createContact: (args) => createContact(db, logger, args),

    async upsertByPhone(principal, rawPhone, data) {
      const phone = phoneOrThrow(rawPhone, 'params.phone');
      return db.transaction(async (tx) => {
        const columns = newContactColumns(phone, data, 'api');
        const inserted = await repo.insertContactIfNew(tx, {
          id: newContactId(),
          portalId: principal.portalId,
          ...columns,
        });
        if (inserted) {
          await recordInitialConsent(tx, [inserted]);
          return { created: true, contact: toContact(inserted) };
        }
        const row = await repo.findContactBy(
          tx,
          principal.portalId,
          { phone },
          {
            forUpdate: true,
          },
        );
        if (!row) throw new AppError('internal_error', 'The contact vanished during the upsert.');
        const changes = upsertChanges(row, data, 'api');
        const updated = changes
          ? await repo.updateContact(tx, principal.portalId, row.id, changes)
          : row;
        if (updated) await runConsentSteps(tx, optedOutSteps, row, updated);
        return { created: false, contact: toContact(updated ?? row) };
      });
    },

    async getContact(principal, id) {
      const row = await repo.findContactBy(db, principal.portalId, { id });
      if (!row) throw notFound();
      const history = await readConsentHistory(db, principal.portalId, id);
      return { ...toContact(row), consentHistory: history.map(toConsentChange) };
    },

    async patchContact(principal, id, patch) {
      const { phone: rawPhone, ...rest } = patch;
      const phone = rawPhone === undefined ? undefined : phoneOrThrow(rawPhone, 'body.phone');
      try {
        return await db.transaction(async (tx) => {
          const row = await repo.findContactBy(tx, principal.portalId, { id });
          if (!row) throw notFound();
          const changes = patchChanges(row, rest, 'api');
          if (phone !== undefined && phone !== row.phone) {
            const holder = await repo.findContactBy(tx, principal.portalId, { phone });
            if (holder) throw phoneTaken(holder.id, 'body.phone');
            changes.phone = phone;
          }
          if (Object.keys(changes).length === 0) return toContact(row);
          const updated = await repo.updateContact(tx, principal.portalId, id, changes);
          if (!updated) throw notFound();
          await runConsentSteps(tx, optedOutSteps, row, updated);
          return toContact(updated);
        });
      } catch (err) {
        // Two patches racing to the same new phone: the unique index decides.
        if (phone !== undefined && isUniqueViolation(err)) {
          const holder = await repo.findContactBy(db, principal.portalId, { phone });
          throw phoneTaken(holder?.id ?? 'unknown', 'body.phone');
        }
        throw err;
      }
    },

    eraseContact: (principal, id, context) =>
      eraseContact({ db, logger, erasureSteps, optedOutSteps }, principal, id, context),

    async listContacts(principal, query) {
      const page = await repo.listContactPage(db, principal.portalId, {
        limit: query.limit,
        after: contactCursor.after(query.cursor),
        filter: listFilter(query),
      });
      return contactCursor.page(page, toContact);
    },

    async importContacts(principal, rows, source) {
      const result = await importContacts(db, principal.portalId, rows, source, optedOutSteps);
      logger.info(
        { portalId: principal.portalId, ...result, failed: result.failed.length },
        'contacts imported',
      );
      return result;
    },
  };
}
