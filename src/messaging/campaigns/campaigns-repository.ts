/**
 * The rows of campaigns: insert, read, keyset pages, changes of a campaign still editable, and
 * lifecycle moves as conditional UPDATEs (a move from a status the row has left changes
 * nothing). The template's parameters are sealed with the keyring (`campaign-template`).
 *
 * @see docs/decisions/0063-campaigns.md
 */
import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Database, Transaction } from '../../db/client.ts';
import { readKeysetPage, type KeysetPage, type PagePosition } from '../../db/keyset-page.ts';
import {
  campaigns,
  type CampaignAudience,
  type CampaignStatus,
} from '../../db/schema/campaigns.ts';
import type { Keyring } from '../../platform/keyring.ts';
import type { CampaignTemplate } from './campaigns-schemas.ts';

export type CampaignKeyring = Pick<Keyring, 'seal' | 'open'>;
type Db = Database | Transaction;

const PURPOSE = 'campaign-template';

type StoredRow = typeof campaigns.$inferSelect;

/** A campaign row with its template opened. */
export type CampaignRow = Omit<StoredRow, 'content'> & { template: CampaignTemplate };

/** What a new or changed campaign stores. */
export interface CampaignFields {
  name: string;
  fromPhoneNumberId: string;
  template: CampaignTemplate;
  audience: CampaignAudience;
  scheduleAt: Date | null;
  pacePerSecond: number;
}

function opened(keyring: CampaignKeyring, row: StoredRow): CampaignRow {
  const { content, ...rest } = row;
  const inner = JSON.parse(keyring.open(content, row.portalId, PURPOSE, row.id)) as Pick<
    CampaignTemplate,
    'parameters' | 'components'
  >;
  return {
    ...rest,
    template: { name: row.templateName, language: row.templateLanguage, ...inner },
  };
}

function columnsOf(keyring: CampaignKeyring, portalId: number, id: string, f: CampaignFields) {
  const { name, language, ...inner } = f.template;
  return {
    name: f.name,
    fromPhoneNumberId: f.fromPhoneNumberId,
    templateName: name,
    templateLanguage: language,
    content: keyring.seal(JSON.stringify(inner), portalId, PURPOSE, id),
    audience: f.audience,
    scheduleAt: f.scheduleAt,
    pacePerSecond: f.pacePerSecond,
  };
}

export async function insertCampaign(
  db: Db,
  keyring: CampaignKeyring,
  row: { id: string; portalId: number } & CampaignFields,
): Promise<CampaignRow> {
  const [inserted] = await db
    .insert(campaigns)
    .values({
      id: row.id,
      portalId: row.portalId,
      ...columnsOf(keyring, row.portalId, row.id, row),
    })
    .returning();
  return opened(keyring, inserted!);
}

/** A campaign of the portal, or null. */
export async function findCampaign(
  db: Db,
  keyring: CampaignKeyring,
  portalId: number,
  id: string,
): Promise<CampaignRow | null> {
  const [row] = await db
    .select()
    .from(campaigns)
    .where(and(eq(campaigns.portalId, portalId), eq(campaigns.id, id)));
  return row ? opened(keyring, row) : null;
}

export async function listCampaignPage(
  db: Database,
  keyring: CampaignKeyring,
  portalId: number,
  options: { limit: number; after?: PagePosition | undefined; status?: CampaignStatus | undefined },
): Promise<KeysetPage<CampaignRow>> {
  const conditions: SQL[] = [eq(campaigns.portalId, portalId)];
  if (options.status !== undefined) conditions.push(eq(campaigns.status, options.status));
  const page = await readKeysetPage(campaigns, conditions, options, (where, orderBy, limit) =>
    db
      .select()
      .from(campaigns)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit),
  );
  return { ...page, rows: page.rows.map((row) => opened(keyring, row)) };
}

/**
 * Change a campaign that has not started (`draft` or `scheduled`; a scheduled one goes back to
 * `draft`, its snapshot to be resolved again at the next start).
 *
 * @returns the row, or null when it is missing or has started.
 */
export async function updateUnstarted(
  db: Db,
  keyring: CampaignKeyring,
  portalId: number,
  id: string,
  fields: CampaignFields,
): Promise<CampaignRow | null> {
  const [row] = await db
    .update(campaigns)
    .set({
      ...columnsOf(keyring, portalId, id, fields),
      status: 'draft',
      resolvedAt: null,
      updatedAt: sql`now()`,
    })
    .where(
      and(
        eq(campaigns.portalId, portalId),
        eq(campaigns.id, id),
        inArray(campaigns.status, ['draft', 'scheduled']),
        sql`${campaigns.resolvingSince} is null`,
      ),
    )
    .returning();
  return row ? opened(keyring, row) : null;
}

/**
 * Move a campaign from one of `from` to `to`, with `set` (in `db`, which may be the
 * transaction that audits it).
 *
 * @returns the row after, or null when it was in none of `from` (nothing changed).
 */
export async function moveCampaign(
  db: Db,
  keyring: CampaignKeyring,
  portalId: number,
  id: string,
  from: readonly CampaignStatus[],
  to: CampaignStatus,
  set: Partial<typeof campaigns.$inferInsert> = {},
): Promise<CampaignRow | null> {
  const [row] = await db
    .update(campaigns)
    .set({ ...set, status: to, updatedAt: sql`now()` })
    .where(
      and(
        eq(campaigns.portalId, portalId),
        eq(campaigns.id, id),
        inArray(campaigns.status, [...from]),
      ),
    )
    .returning();
  return row ? opened(keyring, row) : null;
}

/**
 * Claim the resolution of a campaign's audience: null when another start resolves it now (a
 * claim older than `staleS` seconds is taken over: its instance died).
 */
export async function claimResolution(
  db: Db,
  portalId: number,
  id: string,
  staleS: number,
): Promise<boolean> {
  const rows = await db
    .update(campaigns)
    .set({ resolvingSince: sql`now()` })
    .where(
      and(
        eq(campaigns.portalId, portalId),
        eq(campaigns.id, id),
        inArray(campaigns.status, ['draft']),
        sql`(${campaigns.resolvingSince} is null or ${campaigns.resolvingSince} < now() - make_interval(secs => ${staleS}))`,
      ),
    )
    .returning({ id: campaigns.id });
  return rows.length > 0;
}

/** End a resolution claim (after it succeeded or failed). */
export async function releaseResolution(db: Db, portalId: number, id: string): Promise<void> {
  await db
    .update(campaigns)
    .set({ resolvingSince: null })
    .where(and(eq(campaigns.portalId, portalId), eq(campaigns.id, id)));
}
