/**
 * Recognising a capability's plain words from the permission catalog, so that a page showing
 * capabilities that came through a URL (`/auth-error?reason=permission&missing=…`) shows only
 * words the catalog wrote, never arbitrary text and never a raw permission name.
 *
 * @see docs/partner-connection.md "How an attempt ends"
 */
import { capabilityOf, PERMISSION_CAPABILITIES } from './permissions.ts';

const KNOWN: ReadonlySet<string> = new Set([
  ...Object.values(PERMISSION_CAPABILITIES),
  // The words the catalog gives a permission it does not know.
  capabilityOf(''),
]);

/** Whether `words` are a capability as the catalog words it. */
export function isKnownCapability(words: string): boolean {
  return KNOWN.has(words);
}
