/**
 * The catalog of provider permissions Portico may ask for, each with the capability it gives in
 * plain words. People see capabilities, never raw permission names: a declined permission is
 * explained by what Portico cannot do without it.
 *
 * @see https://developers.facebook.com/docs/permissions
 */

/** Permission → capability, in the words a customer reads on `/auth-error` and `/settings`. */
export const PERMISSION_CAPABILITIES: Readonly<Record<string, string>> = {
  business_management: 'see and manage your business account and its assets',
  whatsapp_business_messaging: 'send messages for your business',
  whatsapp_business_management: 'manage your phone numbers and message templates',
  pages_messaging: 'answer messages sent to your pages',
  pages_show_list: 'see the list of pages you manage',
  pages_read_engagement: 'read posts and engagement on your pages',
  pages_manage_metadata: 'manage the settings of your pages',
  instagram_basic: 'see your business profile on Instagram',
  instagram_manage_messages: 'answer messages sent to your Instagram business profile',
  ads_read: 'read reports of your advertising',
  catalog_management: 'manage your product catalogs',
  leads_retrieval: 'receive leads from your lead forms',
  email: 'see your email address',
  public_profile: 'see your public profile',
};

/** A permission outside the catalog still gets plain words, never its raw name. */
const UNKNOWN_CAPABILITY = 'use a feature of your provider account that Portico needs';

/** The capability `permission` gives, in plain words. */
export function capabilityOf(permission: string): string {
  return Object.hasOwn(PERMISSION_CAPABILITIES, permission)
    ? PERMISSION_CAPABILITIES[permission]!
    : UNKNOWN_CAPABILITY;
}

/** Capabilities of `permissions`, in order, each once. */
export function capabilitiesOf(permissions: readonly string[]): string[] {
  return [...new Set(permissions.map(capabilityOf))];
}

/** The required permissions `granted` lacks, in the order they are required. */
export function missingPermissions(
  required: readonly string[],
  granted: readonly string[],
): string[] {
  const have = new Set(granted);
  return required.filter((p) => !have.has(p));
}
