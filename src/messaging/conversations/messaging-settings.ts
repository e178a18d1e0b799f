/**
 * A portal's messaging settings (`messaging_settings`): the opt-out and opt-in keywords, the
 * confirmation replies to them, and whether opening a message on the inbox marks it read. A
 * portal without a row has the defaults. Read by the keyword step of inbound messages, the
 * inbox and /settings; written by /settings.
 *
 * @see docs/messaging.md "Opt-out keywords"
 */
import { eq, sql } from 'drizzle-orm';
import { recordAuditEvent, type Actor } from '../../audit/audit-log.ts';
import type { Database } from '../../db/client.ts';
import { messagingSettings as settingsTable } from '../../db/schema/conversations.ts';
import type { Db } from '../store/messages-repository.ts';

/** The opt-out keywords of a portal that never set its own (the industry's usual set). */
const DEFAULT_OPT_OUT_KEYWORDS = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT'];
/** The opt-in keywords of a portal that never set its own. */
const DEFAULT_OPT_IN_KEYWORDS = ['START', 'UNSTOP'];
/** At most this many keywords per list, each at most {@link KEYWORD_MAX} characters. */
export const KEYWORDS_MAX = 20;
export const KEYWORD_MAX = 30;
/** A confirmation reply's length bound (characters; a WhatsApp text takes 4,096). */
export const REPLY_MAX = 1024;

export interface MessagingSettings {
  /** Upper-case, trimmed, without duplicates. */
  optOutKeywords: string[];
  optInKeywords: string[];
  /** Sent after an opt-out keyword; null: none. */
  optOutReply: string | null;
  /** Sent after an opt-in keyword; null: none. */
  optInReply: string | null;
  autoMarkRead: boolean;
}

export const DEFAULT_MESSAGING_SETTINGS: Readonly<MessagingSettings> = Object.freeze({
  optOutKeywords: DEFAULT_OPT_OUT_KEYWORDS,
  optInKeywords: DEFAULT_OPT_IN_KEYWORDS,
  optOutReply: null,
  optInReply: null,
  autoMarkRead: false,
});

/** The portal's settings, or the defaults when it has none. */
export async function messagingSettings(db: Db, portalId: number): Promise<MessagingSettings> {
  const [row] = await db.select().from(settingsTable).where(eq(settingsTable.portalId, portalId));
  if (!row) return { ...DEFAULT_MESSAGING_SETTINGS };
  return {
    optOutKeywords: row.optOutKeywords,
    optInKeywords: row.optInKeywords,
    optOutReply: row.optOutReply,
    optInReply: row.optInReply,
    autoMarkRead: row.autoMarkRead,
  };
}

/** What a form sends: keyword lists as text (commas, spaces or lines between keywords). */
export interface MessagingSettingsInput {
  optOutKeywords: string;
  optInKeywords: string;
  optOutReply: string;
  optInReply: string;
  autoMarkRead: boolean;
}

/** One problem of an input, on its field. */
interface SettingsProblem {
  field: keyof MessagingSettingsInput;
  message: string;
}

/**
 * What may surround a keyword: white space, punctuation, emoji (pictographs with their skin-tone
 * modifiers, joiners, variation selectors, keycap and tag characters, flags) and other invisible
 * format characters. Letters, digits and symbols such as `+` or `$` are part of the text.
 */
const AROUND =
  '[\\p{White_Space}\\p{P}\\p{Cf}\\p{Extended_Pictographic}\\p{Emoji_Modifier}\\p{Regional_Indicator}\\u{FE0E}\\u{FE0F}\\u{20E3}]+';
const SURROUNDING = new RegExp(`^${AROUND}|${AROUND}$`, 'gu');

/**
 * A text as it is compared with the keywords: NFKC-normalised (full-width `ＳＴＯＰ` is `STOP`),
 * without the white space, punctuation and emoji around it (`Stop!`, `STOP.`, `🛑 stop 🙏`),
 * upper-cased. What is inside stays: `STOP please` is not `STOP`.
 *
 * @see https://unicode.org/reports/tr15/ (NFKC)
 * @see docs/messaging.md "Opt-out keywords"
 */
export function keywordOf(text: string): string {
  return text.normalize('NFKC').replace(SURROUNDING, '').toUpperCase();
}

/** The keywords of a list's text: split on commas and white space, normalised, deduplicated. */
function keywordList(text: string): string[] {
  const words = text
    .split(/[\s,]+/u)
    .map(keywordOf)
    .filter((w) => w !== '');
  return [...new Set(words)];
}

function keywordProblems(field: SettingsProblem['field'], words: string[]): SettingsProblem[] {
  if (words.length > KEYWORDS_MAX) return [{ field, message: `At most ${KEYWORDS_MAX} keywords.` }];
  const long = words.find((w) => w.length > KEYWORD_MAX);
  if (long !== undefined)
    return [{ field, message: `Each keyword is at most ${KEYWORD_MAX} characters.` }];
  // Unicode Cc and Cf: nothing a person types as a keyword.
  if (words.some((w) => /[\p{Cc}\p{Cf}]/u.test(w)))
    return [{ field, message: 'Keywords cannot hold control characters.' }];
  return [];
}

/**
 * Check an input and turn it into settings.
 *
 * @returns the settings, or the problems (each on its field) and nothing else.
 */
export function parseSettings(
  input: MessagingSettingsInput,
): { ok: true; settings: MessagingSettings } | { ok: false; problems: SettingsProblem[] } {
  const optOutKeywords = keywordList(input.optOutKeywords);
  const optInKeywords = keywordList(input.optInKeywords);
  const problems = [
    ...keywordProblems('optOutKeywords', optOutKeywords),
    ...keywordProblems('optInKeywords', optInKeywords),
  ];
  const both = optInKeywords.filter((w) => optOutKeywords.includes(w));
  if (both.length > 0)
    problems.push({
      field: 'optInKeywords',
      message: `${both.join(', ')} cannot be an opt-out and an opt-in keyword at once.`,
    });
  const reply = (field: 'optOutReply' | 'optInReply') => {
    const text = input[field].trim();
    if (text.length > REPLY_MAX)
      problems.push({ field, message: `At most ${REPLY_MAX} characters.` });
    return text === '' ? null : text;
  };
  const optOutReply = reply('optOutReply');
  const optInReply = reply('optInReply');
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    settings: {
      optOutKeywords,
      optInKeywords,
      optOutReply,
      optInReply,
      autoMarkRead: input.autoMarkRead,
    },
  };
}

/** Store the portal's settings (replacing the row, or creating it). */
export async function saveMessagingSettings(
  db: Db,
  portalId: number,
  settings: MessagingSettings,
): Promise<void> {
  await db
    .insert(settingsTable)
    .values({ portalId, ...settings })
    .onConflictDoUpdate({
      target: settingsTable.portalId,
      set: { ...settings, updatedAt: sql`now()` },
    });
}

/** The settings' names as the audit log records a change of them (never their values). */
const SETTING_WORDS: Record<keyof MessagingSettings, string> = {
  optOutKeywords: 'opt-out keywords',
  optInKeywords: 'opt-in keywords',
  optOutReply: 'opt-out confirmation reply',
  optInReply: 'opt-in confirmation reply',
  autoMarkRead: 'mark read on open',
};

/**
 * Store the portal's settings and, when any changed, audit which ones
 * (`messaging_settings.changed`, reason "changed: opt-out keywords, …"; never a keyword or a
 * reply's text), in one transaction.
 *
 * @returns the names of the settings that changed (keys of {@link MessagingSettings}); [] when
 *   nothing did (then nothing is written).
 */
export async function changeMessagingSettings(
  db: Database,
  portalId: number,
  settings: MessagingSettings,
  context: { actor: Actor; requestId?: string | null | undefined },
): Promise<(keyof MessagingSettings)[]> {
  return db.transaction(async (tx) => {
    const before = await messagingSettings(tx, portalId);
    const changed = (Object.keys(SETTING_WORDS) as (keyof MessagingSettings)[]).filter(
      (k) => JSON.stringify(before[k]) !== JSON.stringify(settings[k]),
    );
    if (changed.length === 0) return changed;
    await saveMessagingSettings(tx, portalId, settings);
    await recordAuditEvent(tx, {
      portalId,
      actor: context.actor,
      action: 'messaging_settings.changed',
      reason: `changed: ${changed.map((k) => SETTING_WORDS[k]).join(', ')}`,
      requestId: context.requestId ?? null,
    });
    return changed;
  });
}
