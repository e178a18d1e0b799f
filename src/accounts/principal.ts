import type { Scope } from './scopes.ts';

/**
 * Who an API request acts as: the owner of the presented token, within its portal (tenant).
 * Every read the request makes is filtered by `portalId`.
 */
export interface Principal {
  portalId: number;
  /** Public identifier of the portal: digits, as a string. */
  portalCode: string;
  userId: number;
  isMainAdmin: boolean;
  scopes: readonly Scope[];
}

/** Looks a token hash (SHA-256 hex) up; null when no live token has it. */
export type PrincipalLookup = (tokenHash: string) => Promise<Principal | null>;
