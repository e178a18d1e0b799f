/**
 * The sandbox provider's memory: registered apps, grants (a person who allowed an app), single-
 * use authorization codes and access tokens. In memory; the development sandbox saves and
 * restores what a restart must keep (sandbox-store.ts), a test's sandbox forgets all.
 *
 * Emulates Graph's documented behaviour: codes are single-use and expire after 60 s, a code is
 * bound to the redirect URI of its dialog, short-lived tokens last 2 hours and long-lived ones
 * 60 days, a revoked or expired token is reported with error 190.
 */
import { createHmac, randomBytes, randomInt } from 'node:crypto';
import { CloudState, type CloudOptions } from './cloud-state.ts';

export interface SandboxAppConfig {
  appId: string;
  appSecret: string;
  /** Redirect URIs registered for the app; the dialog and the exchange compare exactly. */
  redirectUris: string[];
  /** Permissions of the app's login configuration: what a dialog request with a `config_id` and no
   * `scope` asks for (and what the `authorize` test hook grants by default). */
  permissions?: string[];
  name?: string;
  /** Where "remove the app" POSTs a signed deauthorize request. */
  deauthorizeCallbackUrl?: string;
  /** Where "delete my data" POSTs a signed data-deletion request. */
  dataDeletionCallbackUrl?: string;
  /** Where WhatsApp Business Account webhooks (statuses, inbound messages, templates) go. */
  webhookUrl?: string;
  /** The verify token the sandbox sends once to `webhookUrl` (`hub.verify_token`). */
  webhookVerifyToken?: string;
}

export interface Grant {
  appId: string;
  userId: string;
  permissions: string[];
  assetIds: string[];
  grantedAt: number;
}

/** A PKCE code challenge a dialog request carried (RFC 7636 §4.3). */
export interface CodeChallenge {
  codeChallenge: string;
  codeChallengeMethod: 'S256' | 'plain';
}

interface CodeRecord {
  appId: string;
  redirectUri: string;
  userId: string;
  permissions: string[];
  /** The PKCE challenge of the dialog request; the exchange then needs its verifier. */
  challenge?: CodeChallenge | undefined;
  expiresAtMs: number;
  used: boolean;
}

export interface TokenRecord {
  appId: string;
  userId: string;
  permissions: string[];
  assetIds: string[];
  issuedAtMs: number;
  expiresAtMs: number;
  revoked: boolean;
  longLived: boolean;
}

/** One request the sandbox received (for tests: who called what, with which user's token). */
export interface SandboxCall {
  method: string;
  /** Path and query as received: tests assert no secret or token ever appears here. */
  url: string;
  /** The provider user whose token the call used or inspected, when known. */
  userId?: string;
  appId?: string;
}

export const DEFAULT_SANDBOX_PERMISSIONS = [
  'business_management',
  'whatsapp_business_messaging',
  'whatsapp_business_management',
];

/** Seconds an authorization code stays exchangeable. */
export const CODE_TTL_S = 60;
const SHORT_LIVED_TTL_S = 2 * 3600;
const LONG_LIVED_TTL_S = 60 * 24 * 3600;

/** The emulator's state; `now()` is the sandbox clock (milliseconds), movable in tests. */
export class SandboxState {
  readonly apps = new Map<string, SandboxAppConfig>();
  readonly grants = new Map<string, Grant>();
  readonly codes = new Map<string, CodeRecord>();
  readonly tokens = new Map<string, TokenRecord>();
  readonly calls: SandboxCall[] = [];
  /** The WhatsApp Cloud API's WABAs, templates, messages (cloud-state.ts). */
  readonly cloud: CloudState;
  private offsetMs = 0;

  constructor(apps: SandboxAppConfig[], cloudOptions: Partial<CloudOptions> = {}) {
    for (const app of apps) this.apps.set(app.appId, app);
    this.cloud = new CloudState(cloudOptions);
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** Move the sandbox clock forward (tests: expired codes and tokens). */
  advanceTime(ms: number): void {
    this.offsetMs += ms;
  }

  permissionsOf(appId: string): string[] {
    return this.apps.get(appId)?.permissions ?? DEFAULT_SANDBOX_PERMISSIONS;
  }

  /** Asset ids a person owns, derived from their id (stable, digits like Graph ids). */
  assetIdsFor(userId: string, permissions: string[]): string[] {
    const digits = userId.replace(/\D/g, '').padStart(6, '0').slice(-6);
    return permissions.some((p) => p.startsWith('whatsapp_'))
      ? [`1020${digits}01`, `1020${digits}02`]
      : [`9080${digits}01`];
  }

  /** Record a person's grant and mint a single-use code bound to `redirectUri`. */
  issueCode(input: {
    appId: string;
    redirectUri: string;
    userId: string;
    permissions: string[];
    challenge?: CodeChallenge | undefined;
  }) {
    const code = `SBX${randomBytes(32).toString('base64url')}`;
    this.codes.set(code, {
      ...input,
      expiresAtMs: this.now() + CODE_TTL_S * 1000,
      used: false,
    });
    this.grants.set(grantKey(input.appId, input.userId), {
      appId: input.appId,
      userId: input.userId,
      permissions: input.permissions,
      assetIds: this.assetIdsFor(input.userId, input.permissions),
      grantedAt: this.now(),
    });
    return code;
  }

  issueToken(grant: Grant, longLived: boolean): { token: string; record: TokenRecord } {
    const token = `SBXT${randomBytes(48).toString('base64url')}`;
    const now = this.now();
    const record: TokenRecord = {
      appId: grant.appId,
      userId: grant.userId,
      permissions: grant.permissions,
      assetIds: grant.assetIds,
      issuedAtMs: now,
      expiresAtMs: now + (longLived ? LONG_LIVED_TTL_S : SHORT_LIVED_TTL_S) * 1000,
      revoked: false,
      longLived,
    };
    this.tokens.set(token, record);
    return { token, record };
  }

  grant(appId: string, userId: string): Grant | undefined {
    return this.grants.get(grantKey(appId, userId));
  }

  /** Revoke every token of a person for an app ("revoke the token"). */
  revokeTokens(appId: string, userId: string): number {
    let n = 0;
    for (const record of this.tokens.values()) {
      if (record.appId === appId && record.userId === userId && !record.revoked) {
        record.revoked = true;
        n++;
      }
    }
    return n;
  }

  /** Remove the grant and revoke its tokens ("remove the app"). */
  removeGrant(appId: string, userId: string): void {
    this.grants.delete(grantKey(appId, userId));
    this.revokeTokens(appId, userId);
  }

  /** The app whose `Authorization: Bearer {app_id}|{app_secret}` this is, if any. */
  appForAppToken(appToken: string | undefined): SandboxAppConfig | undefined {
    if (!appToken) return undefined;
    const bar = appToken.indexOf('|');
    if (bar === -1) return undefined;
    const app = this.apps.get(appToken.slice(0, bar));
    return app && app.appSecret === appToken.slice(bar + 1) ? app : undefined;
  }

  /** A `signed_request` as the provider sends it to the app's callbacks. */
  signedRequestFor(appId: string, userId: string): string {
    const app = this.apps.get(appId);
    if (!app) throw new Error('unknown app');
    const payload = Buffer.from(
      JSON.stringify({
        algorithm: 'HMAC-SHA256',
        issued_at: Math.floor(this.now() / 1000),
        user_id: userId,
      }),
    ).toString('base64url');
    const signature = createHmac('sha256', app.appSecret).update(payload).digest('base64url');
    return `${signature}.${payload}`;
  }
}

/** The key of a grant in `SandboxState.grants`. */
export function grantKey(appId: string, userId: string): string {
  return `${appId}\u0000${userId}`;
}

/** A Graph-looking trace id. */
export function fbtraceId(): string {
  return randomBytes(8).toString('base64url');
}

/** A Graph-looking numeric id for a new sandbox person. */
export function newProviderUserId(): string {
  return `1000${randomInt(10_000_000, 99_999_999)}`;
}
