/**
 * What the web pages and the authorization routes need from the partner connection service
 * (`services.partner`, built in `partner/`). Declared here, structurally, so the browser side
 * depends on this small surface only.
 */
import type { ActorType } from '../audit/audit-log.ts';

export type ConnectionSummary =
  | {
      status: 'active';
      /** ISO 8601 UTC. */
      connectedAt: string;
      connectedBy: { userId: number; email: string } | null;
      /** Capabilities in plain words. */
      capabilities: string[];
      assetIds: string[];
    }
  | { status: 'inactive'; revokedAt: string | null; revokeReason: string | null };

export type CompleteAuthorizationResult =
  | { ok: true }
  | { ok: false; reason: 'permission'; missingCapabilities: string[] }
  | { ok: false; reason: 'config' | 'provider' | 'storage' };

export interface PartnerPort {
  /** The provider's authorization address for this state (spec §4.3). */
  authorizationUrl(state: string): string;
  /** Exchange the authorization code and store the connection of the portal (spec §4.4 5–6). */
  completeAuthorization(input: {
    portalId: number;
    userId: number;
    authorizationCode: string;
    requestId?: string;
  }): Promise<CompleteAuthorizationResult>;
  connectionSummary(portalId: number): Promise<ConnectionSummary>;
  /** The one revocation cleanup (issue 4); `revoked` is false when it was already inactive. */
  revokeConnection(
    portalId: number,
    opts: { actor: { type: ActorType; id: string }; reason: string; requestId?: string },
  ): Promise<{ revoked: boolean }>;
}
