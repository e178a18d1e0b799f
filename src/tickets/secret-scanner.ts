/**
 * Secret scanning of free text before it is stored (support tickets).
 *
 * Recognised secrets: Portico API tokens (the `ptk_` prefix and a valid CRC32 checksum, so a
 * random look-alike is left alone) and the provider app secret (exact occurrence). Each is
 * replaced by `[REDACTED]`. The caller learns which kinds were found and the SHA-256 of each
 * token (to tell its portal to regenerate it), never the secret itself.
 *
 * @see docs/api-tokens.md "The token"
 */
import { hashApiToken, isWellFormedApiToken, TOKEN_PATTERN } from '../accounts/api-token.ts';

export const REDACTED = '[REDACTED]';

export interface ScanResult {
  /** The text with every recognised secret replaced by `[REDACTED]`. */
  text: string;
  /** SHA-256 hex of each distinct API token found. */
  apiTokenHashes: string[];
  /** True when the provider app secret occurred in the text. */
  appSecretFound: boolean;
}

export interface SecretScanner {
  scan(text: string): ScanResult;
}

/**
 * A scanner for the given provider app secret (none when the service has no provider set up).
 * The app secret is matched as an exact substring; an empty secret is never matched.
 */
export function createSecretScanner(appSecret: string | undefined): SecretScanner {
  return {
    scan(text) {
      const hashes = new Set<string>();
      // The token pattern is global; String.prototype.replace resets its lastIndex itself.
      let out = text.replace(TOKEN_PATTERN, (candidate) => {
        if (!isWellFormedApiToken(candidate)) return candidate;
        hashes.add(hashApiToken(candidate));
        return REDACTED;
      });
      let appSecretFound = false;
      if (appSecret && out.includes(appSecret)) {
        appSecretFound = true;
        out = out.split(appSecret).join(REDACTED);
      }
      return { text: out, apiTokenHashes: [...hashes], appSecretFound };
    },
  };
}
