import type { IpAllowList } from './ip-allow-list.ts';
import type { Scope } from './scopes.ts';

/**
 * Who a request acts as: a user within its portal (tenant). Every read the request makes is
 * filtered by `portalId`.
 */
export interface Principal {
  portalId: number;
  /** Public identifier of the portal: digits, as a string. */
  portalCode: string;
  userId: number;
  isMainAdmin: boolean;
  scopes: readonly Scope[];
}

/** The principal of an API request: the owner of the presented key, and the key's rules. */
export interface KeyPrincipal extends Principal {
  /** The API key presented: its id and name. */
  keyId: number;
  keyName: string;
  /** When the key expires (Unix ms); null: never. Past it → 401 `token_expired`. */
  expiresAt: number | null;
  /**
   * When the presented *secret* stops working (Unix ms): the end of a rotation's overlap for
   * the previous secret; null for the current one. Past it → 401 `invalid_token`.
   */
  secretValidUntil: number | null;
  /** The key's allow-list as stored (normalised CIDR ranges); null: any address. */
  allowedIps: readonly string[] | null;
  /** The same list, compiled once per lookup; null: any address. */
  allowList: IpAllowList | null;
  /** The key's own requests per minute; null: the instance's limit. */
  rateLimitPerMinute: number | null;
}

/** Looks a secret's hash (SHA-256 hex) up; null when no live key has it. */
export type PrincipalLookup = (tokenHash: string) => Promise<KeyPrincipal | null>;
