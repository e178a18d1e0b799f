/**
 * What the sandbox's authorization dialog says each permission lets the app do.
 *
 * These are the emulated provider's own texts, kept apart from Portico's catalog of capabilities
 * on purpose: the provider and the app are separate parties, and the sandbox must not change
 * when Portico rewords its pages. The words were Portico's when the two were separated; they may
 * drift apart freely.
 *
 * @see https://developers.facebook.com/docs/permissions
 */

/** Permission → what it lets the app do, for the permissions the dialog may be asked to show. */
const PERMISSION_WORDS: ReadonlyMap<string, string> = new Map([
  ['business_management', 'see and manage your business account and its assets'],
  ['whatsapp_business_messaging', 'send messages for your business'],
  ['whatsapp_business_management', 'manage your phone numbers and message templates'],
  ['pages_messaging', 'answer messages sent to your pages'],
  ['pages_show_list', 'see the list of pages you manage'],
  ['pages_read_engagement', 'read posts and engagement on your pages'],
  ['pages_manage_metadata', 'manage the settings of your pages'],
  ['instagram_basic', 'see your business profile on Instagram'],
  ['instagram_manage_messages', 'answer messages sent to your Instagram business profile'],
  ['ads_read', 'read reports of your advertising'],
  ['catalog_management', 'manage your product catalogs'],
  ['leads_retrieval', 'receive leads from your lead forms'],
  ['email', 'see your email address'],
  ['public_profile', 'see your public profile'],
]);

/** Shown for a permission the table does not know (a `scope` may name anything). */
const UNKNOWN_PERMISSION_WORDS = 'use a feature of your provider account that Portico needs';

/**
 * The plain words the dialog shows next to `permission`. A Map lookup, so a `scope` naming an
 * `Object.prototype` key (`constructor`, `__proto__`) gets the unknown words, not a function.
 */
export function permissionWords(permission: string): string {
  return PERMISSION_WORDS.get(permission) ?? UNKNOWN_PERMISSION_WORDS;
}
