/**
 * The contacts import: up to 1,000 rows upserted by phone in one transaction. Invalid rows are
 * reported and skipped; the valid ones land together or not at all. Within one request a phone
 * that appears twice is written once, from its last row; the earlier rows are reported.
 *
 * @see docs/reference/external-api.md "The capability areas", import
 */
import { recordInitialConsent, runConsentSteps, type OptedOutStep } from './consent-steps.ts';
import type { Database } from '../db/client.ts';
import {
  newContactColumns,
  upsertChanges,
  type ConsentSource,
  type ContactData,
} from './contact-changes.ts';
import type { ContactFields } from './contact-schemas.ts';
import { rowFailures } from './contact-validation.ts';
import * as repo from './contacts-repository.ts';
import { newContactId } from './contact-id.ts';
import { normalisePhone } from './phone.ts';

/** A row that did not land: its 0-based index, the field at fault, and why. */
export interface ImportFailure {
  index: number;
  field: string;
  message: string;
}

export interface ImportResult {
  created: number;
  updated: number;
  unchanged: number;
  failed: ImportFailure[];
}

interface ValidRow {
  index: number;
  phone: string;
  data: ContactData;
}

/** Validate every row and keep the last row of each phone. Pure: no I/O. */
export function sortRows(rows: readonly unknown[]): { valid: ValidRow[]; failed: ImportFailure[] } {
  const failed: ImportFailure[] = [];
  const byPhone = new Map<string, ValidRow>();
  const replaced: { index: number; phone: string }[] = [];
  rows.forEach((row, index) => {
    const problems = rowFailures(row);
    if (problems.length > 0) {
      for (const p of problems) failed.push({ index, field: p.field, message: p.message });
      return;
    }
    const { phone: rawPhone, ...data } = row as ContactFields;
    const phone = normalisePhone(rawPhone);
    if (!phone.ok) {
      failed.push({ index, field: 'phone', message: phone.message });
      return;
    }
    const earlier = byPhone.get(phone.e164);
    if (earlier) replaced.push({ index: earlier.index, phone: phone.e164 });
    byPhone.set(phone.e164, { index, phone: phone.e164, data });
  });
  // Each replaced row names the row that was imported: the last of its phone.
  for (const { index, phone } of replaced) {
    const last = byPhone.get(phone)!.index;
    failed.push({
      index,
      field: 'phone',
      message: `the same phone as row ${last}, which was imported instead (the last one wins)`,
    });
  }
  failed.sort((a, b) => a.index - b.index);
  return { valid: [...byPhone.values()], failed };
}

/**
 * Import `rows` into the portal, one statement per step: the existing contacts (by E.164
 * phone) are locked and read; those a row changes (the fields it carries, by `upsertChanges`)
 * are updated together, the others counted `unchanged` and left untouched; the new ones are
 * inserted together. The opt-out steps run for each contact whose consent became `opted_out`.
 *
 * @param source recorded as the consent source of what the import sets (`import`).
 * @returns the counts and the rows that did not land.
 */
export async function importContacts(
  db: Database,
  portalId: number,
  rows: readonly unknown[],
  source: ConsentSource,
  optedOutSteps: readonly OptedOutStep[] = [],
): Promise<ImportResult> {
  const { valid, failed } = sortRows(rows);
  const result: ImportResult = { created: 0, updated: 0, unchanged: 0, failed };
  if (valid.length === 0) return result;
  await db.transaction(async (tx) => {
    const existing = await repo.lockContactsByPhones(
      tx,
      portalId,
      valid.map((r) => r.phone),
    );
    const byPhone = new Map(existing.map((row) => [row.phone, row]));
    const fresh: ValidRow[] = [];
    const updates: { id: string; changes: repo.FieldChanges }[] = [];
    for (const row of valid) {
      const stored = byPhone.get(row.phone);
      if (!stored) fresh.push(row);
      else {
        const changes = upsertChanges(stored, row.data, source);
        if (changes) updates.push({ id: stored.id, changes });
        else result.unchanged += 1;
      }
    }
    const updated = await repo.updateContacts(tx, portalId, updates);
    result.updated = updated.length;
    const before = new Map(existing.map((row) => [row.id, row]));
    for (const after of updated) {
      await runConsentSteps(tx, optedOutSteps, before.get(after.id)!, after);
    }
    const newRows = fresh.map((row) => ({
      id: newContactId(),
      ...newContactColumns(row.phone, row.data, source),
    }));
    const inserted = new Set(await repo.insertContacts(tx, portalId, newRows));
    result.created = inserted.size;
    await recordInitialConsent(
      tx,
      newRows
        .filter((r) => inserted.has(r.phone))
        .map((r) => ({
          portalId,
          id: r.id,
          consentWhatsapp: r.consentWhatsapp ?? 'unknown',
          consentSource: r.consentSource ?? source,
        })),
    );
    // A phone created meanwhile by another request (after the lock above) is not
    // overwritten blindly: the row is reported so the client can send it again.
    for (const row of fresh) {
      if (!inserted.has(row.phone)) {
        failed.push({
          index: row.index,
          field: 'phone',
          message: 'was created by another request at the same time; send this row again',
        });
      }
    }
  });
  failed.sort((a, b) => a.index - b.index);
  return result;
}
