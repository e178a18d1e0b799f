import { sql } from 'drizzle-orm';
import {
  bigint,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import type { SealedValue } from '../../platform/keyring.ts';
import { contacts } from './contacts.ts';
import { portals } from './portals.ts';

/** A campaign's statuses: draft → scheduled → running ⇄ paused → completed, or cancelled. */
export const CAMPAIGN_STATUSES = [
  'draft',
  'scheduled',
  'running',
  'paused',
  'completed',
  'cancelled',
] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/** Who a campaign goes to, as stored (no person data: contact ids and a tag). */
export type CampaignAudience = { tag: string } | { contactIds: string[] } | { all: true };

/**
 * A recipient's state in the snapshot: `pending` (not yet handed to the send path), `sending`
 * (claimed by a runner; its send may or may not have happened), `queued` (handed over, the
 * message is `message_id`), `refused` (the send path refused it: `error_code`), `skipped`
 * (ineligible when the audience was resolved: `skip_reason`).
 */
export const RECIPIENT_STATES = ['pending', 'sending', 'queued', 'refused', 'skipped'] as const;
export type RecipientState = (typeof RECIPIENT_STATES)[number];

/** Why a recipient was left out when the audience was resolved. */
export const SKIP_REASONS = [
  'opted_out',
  'erased',
  'marketing_stopped',
  'invalid',
  'duplicate',
  'missing_parameter',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

const at = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/**
 * Broadcasts of one approved template to an audience (`/messaging/campaigns`,
 * docs/decisions/0063-campaigns.md). Invariants: every read filters by `portal_id`; the
 * template's parameters (fixed texts are message content) are stored only sealed (`content`,
 * purpose `campaign-template`, the campaign id as subject); `status` changes only along the
 * lifecycle, by a conditional UPDATE; `next_batch_at` is the pacing slot every instance's runner
 * claims (`FOR UPDATE SKIP LOCKED`), so the pace holds across instances. Times have millisecond
 * precision for the keyset cursor.
 */
export const campaigns = pgTable(
  'campaigns',
  {
    /** Public id: `cmp_` + base62. */
    id: text('id').primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** The sender's phone number id. */
    fromPhoneNumberId: text('from_phone_number_id').notNull(),
    templateName: text('template_name').notNull(),
    templateLanguage: text('template_language').notNull(),
    /** Sealed JSON of `{parameters, components?}` (`CampaignTemplateContent`). */
    content: jsonb('content').$type<SealedValue>().notNull(),
    audience: jsonb('audience').$type<CampaignAudience>().notNull(),
    scheduleAt: at('schedule_at'),
    pacePerSecond: integer('pace_per_second').notNull(),
    status: text('status', { enum: CAMPAIGN_STATUSES }).notNull().default('draft'),
    /** Why it is paused or was cancelled by the system (`insufficient_credit`, …); null otherwise. */
    statusReason: text('status_reason'),
    /** The template's category when the audience was resolved (sets the estimate). */
    category: text('category'),
    /** The estimate when resolved: recipients × the category's price, minor units of `currency`. */
    estimatedCostMinor: bigint('estimated_cost_minor', { mode: 'number' }),
    currency: text('currency'),
    /** Snapshot counts: recipients kept, skipped, and skipped by reason. */
    recipients: integer('recipients').notNull().default(0),
    skipped: integer('skipped').notNull().default(0),
    skippedBy: jsonb('skipped_by')
      .$type<Partial<Record<SkipReason, number>>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    /** When the snapshot was last resolved; null before. */
    resolvedAt: at('resolved_at'),
    /** A resolution in progress (its start), so two starts never resolve at once. */
    resolvingSince: at('resolving_since'),
    /** The runners' pacing slot: the next batch is due then. */
    nextBatchAt: at('next_batch_at'),
    startedAt: at('started_at'),
    finishedAt: at('finished_at'),
    createdAt: at('created_at').notNull().defaultNow(),
    updatedAt: at('updated_at').notNull().defaultNow(),
  },
  (t) => [
    // Ascending on purpose (see contacts.ts): scanned backwards for newest-first pages.
    index('campaigns_portal_page').on(t.portalId, t.createdAt, t.id),
    index('campaigns_runnable').on(t.status, t.nextBatchAt),
  ],
);

/**
 * A campaign's audience, resolved once before it starts (the snapshot): one row per candidate,
 * numbered by `seq` from 1, the ineligible kept as `skipped` with their reason (the report
 * counts them). No person data: the contact id only, set null when the contact is erased (the
 * counts remain). `message_id` links the message the send path queued, so its statuses make
 * the campaign's counts.
 */
export const campaignRecipients = pgTable(
  'campaign_recipients',
  {
    campaignId: text('campaign_id')
      .notNull()
      .references(() => campaigns.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    portalId: integer('portal_id').notNull(),
    contactId: text('contact_id').references(() => contacts.id, { onDelete: 'set null' }),
    state: text('state', { enum: RECIPIENT_STATES }).notNull(),
    skipReason: text('skip_reason', { enum: SKIP_REASONS }),
    /** The send path's refusal code (`recipient_opted_out`, …) for a `refused` recipient. */
    errorCode: text('error_code'),
    messageId: text('message_id'),
    claimedAt: at('claimed_at'),
  },
  (t) => [
    primaryKey({ columns: [t.campaignId, t.seq] }),
    index('campaign_recipients_pending').on(t.campaignId, t.state, t.seq),
    index('campaign_recipients_contact').on(t.contactId),
    index('campaign_recipients_message').on(t.messageId),
  ],
);
