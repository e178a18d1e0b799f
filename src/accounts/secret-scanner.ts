/**
 * The one secret scanner for free text a client sends and Portico stores (support tickets
 * today; contacts and messaging next). Every stored free-text field of every feature goes
 * through it before it is stored, hashed or logged.
 *
 * Recognised secrets: Portico API tokens (the `ptk_` prefix and a valid CRC32 checksum, so a
 * random look-alike is left alone) and the provider app secret (exact occurrence). Each is
 * replaced by `[REDACTED]`. The caller learns which kinds were found and the SHA-256 of each
 * token (to tell its portal to regenerate it), never the secret itself.
 *
 * @see docs/reference/external-api.md
 * @see docs/security.md invariant 1
 */
import { hashApiToken, isWellFormedApiToken, TOKEN_PATTERN } from './api-token.ts';

export const REDACTED = '[REDACTED]';

/** What a scan found, without the secrets themselves. */
export interface SecretFindings {
  /** SHA-256 hex of each distinct API token found, in order of first occurrence. */
  apiTokenHashes: string[];
  /** True when the provider app secret occurred. */
  appSecretFound: boolean;
}

export interface ScanResult extends SecretFindings {
  /** The text with every recognised secret replaced by `[REDACTED]`. */
  text: string;
}

/** A free-text field as stored: a string, a list of strings (tags), or nothing. */
export type FreeText = string | readonly string[] | null | undefined;

/** `fields` with every secret redacted, and what was found across all of them. */
export interface RedactedFields<T> extends SecretFindings {
  fields: T;
  /** True when anything was redacted in any field. */
  secretFound: boolean;
}

export interface SecretScanner {
  /** Redact one text. */
  scan(text: string): ScanResult;
  /**
   * Redact every field of `fields` (strings, and each string of a list; null and undefined are
   * kept as they are), in one pass whose findings cover them all.
   */
  redactFields<T extends { [K in keyof T]: FreeText }>(fields: T): RedactedFields<T>;
}

/** Merge findings: token hashes in order of first occurrence, the app secret if any found it. */
export function mergeFindings(...all: SecretFindings[]): SecretFindings {
  return {
    apiTokenHashes: [...new Set(all.flatMap((f) => f.apiTokenHashes))],
    appSecretFound: all.some((f) => f.appSecretFound),
  };
}

/**
 * A scanner for the given provider app secret (none when the service has no provider set up).
 * The app secret is matched as an exact substring; an empty secret is never matched.
 */
export function createSecretScanner(appSecret: string | undefined): SecretScanner {
  function scan(text: string): ScanResult {
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
  }

  return {
    scan,
    redactFields<T extends { [K in keyof T]: FreeText }>(fields: T): RedactedFields<T> {
      const found: SecretFindings[] = [];
      const redact = (text: string) => {
        const result = scan(text);
        found.push(result);
        return result.text;
      };
      const out = Object.fromEntries(
        Object.entries(fields).map(([name, value]) => [
          name,
          typeof value === 'string'
            ? redact(value)
            : Array.isArray(value)
              ? (value as readonly string[]).map(redact)
              : value,
        ]),
      ) as T;
      const findings = mergeFindings(...found);
      return {
        fields: out,
        ...findings,
        secretFound: findings.apiTokenHashes.length > 0 || findings.appSecretFound,
      };
    },
  };
}
