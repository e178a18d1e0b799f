/**
 * What the account pages need, and the helpers they share. Each page plugin takes this narrow
 * set, never the whole services bag.
 *
 * @see docs/architecture.md "web/"
 */
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AccountsService } from '../accounts/accounts-service.ts';
import type { ApiKeysService } from '../accounts/api-keys-service.ts';
import type { TeamService } from '../accounts/team-service.ts';
import type { AuditEvent } from '../audit/audit-log.ts';
import type { PagePosition } from '../db/keyset-page.ts';
import type { PageSessions } from '../browser/web-session.ts';
import type { WebSession } from '../browser/session-store.ts';
import type { ContactsService } from '../contacts/contacts-service.ts';
import type { DraftsService } from '../messaging/drafts/drafts-service.ts';
import type { NumberOnboarding, ProviderAdapter } from '../messaging/provider/provider-adapter.ts';
import type { TemplatesService } from '../messaging/templates/templates-service.ts';
import type { PartnerService } from '../partner/partner-service.ts';
import type { MessagingService } from '../messaging/store/messaging-types.ts';
import type { MessagingReads } from './messages/messages-page-data.ts';
import type { WebhooksService } from '../webhooks/webhooks-service.ts';
import type { SignInLimitSettings } from './sign-in/sign-in-limits.ts';
import { signedIn } from './page-area.ts';
import type { AgentsService } from '../accounts/agents-service.ts';
import type { AgentDeskService } from '../tickets/agent-desk-service.ts';
import type { TicketsService } from '../tickets/tickets-service.ts';
import type { InboxReads } from './inbox-reads.ts';
import type { Actor } from '../audit/audit-log.ts';
import type { MessagingSettings } from '../messaging/conversations/messaging-settings.ts';
import type { StandingSignal } from '../messaging/provider-webhooks/account-standing.ts';

export interface WebRoutesOptions {
  sessions: PageSessions;
  /** Lifetime of a new session, in seconds. */
  sessionTtlSeconds: number;
  accounts: Pick<AccountsService, 'authenticatePassword' | 'showPortal' | 'regenerateToken'>;
  partner: Pick<
    PartnerService,
    'connectionSummary' | 'authorizationUrl' | 'providerName' | 'onboardConnection'
  >;
  /** `/settings/keys`: the portal's API keys, as the API's `/keys` and the CLI manage them. */
  apiKeys: Pick<ApiKeysService, 'list' | 'create' | 'rotate' | 'revoke' | 'usage'>;
  /** `/settings/team` and the invitation page: the portal's members. */
  team: Pick<
    TeamService,
    | 'listMembers'
    | 'invite'
    | 'invitation'
    | 'acceptInvitation'
    | 'setRole'
    | 'disable'
    | 'enable'
    | 'remove'
    | 'setAvailability'
  >;
  /** Portico's public origin (APP_BASE_URL): the address the pages name for signing in. */
  appBaseUrl: string;
  /**
   * In development only: the origin every page request is redirected to when it arrives on
   * another host (127.0.0.1 vs localhost: cookies are per host). Null in production and tests.
   */
  canonicalOrigin: string | null;
  /** Where the sign-in rate limits keep their counters (Redis when configured). */
  signInLimits: SignInLimitSettings;
  contacts: Pick<
    ContactsService,
    'listContacts' | 'getContact' | 'patchContact' | 'eraseContact' | 'importContacts'
  >;
  /**
   * A contact's page: the ids of the contact's conversations (one per business number), newest
   * activity first, at most `limit`; each is then read through {@link inbox}.
   */
  contactConversationIds: (portalId: number, contactId: string, limit: number) => Promise<string[]>;
  webhooks: Pick<
    WebhooksService,
    | 'listEndpoints'
    | 'recentDeliveries'
    | 'creditLowThreshold'
    | 'addEndpoint'
    | 'removeEndpoint'
    | 'rotateSecret'
    | 'enableEndpoint'
    | 'sendTestEvent'
    | 'resend'
    | 'setCreditLowThreshold'
    | 'portalDeliveries'
    | 'replay'
    | 'recentReplays'
  >;
  /** What `/messages` shows and sends. */
  messaging: {
    /** The connected account's numbers (cached); also the connection card of /settings. */
    provider: Pick<ProviderAdapter, 'numbers' | 'templates'>;
    /** The provider's account signals in force (the banner of /settings), newest first. */
    accountSignals?: ((portalId: number) => Promise<StandingSignal[]>) | undefined;
    templates: Pick<TemplatesService, 'listTemplates'>;
    drafts: Pick<DraftsService, 'listDrafts'>;
    /** The messaging engine's log, reports and credit. */
    log: MessagingReads;
    /** The composer's sends: the API's own send (checks, credit reservation, queue). */
    send: Pick<MessagingService, 'sendMessage'>;
    /**
     * The inbox's attachments: the API's own upload (`POST /messaging/media`: the type checked
     * by content, the limits per kind, streamed to the provider from `phoneNumberId`). Throws
     * the API's errors (e.g. a refused type or size, naming the limit). Absent: the inbox offers
     * no file.
     */
    upload?:
      | ((
          portalId: number,
          input: { phoneNumberId: string; fileName: string; file: Readable },
        ) => Promise<InboxUpload>)
      | undefined;
  };
  /** `/inbox`: conversations, threads, media and the changes heard from other instances. */
  inbox: InboxReads;
  /** `/support`: the portal's tickets, as the API serves them. */
  tickets: TicketsService;
  /** The agent console: agents' sign-in and the desk over every portal's tickets. */
  agents: Pick<AgentsService, 'authenticateAgent' | 'listAgents'>;
  desk: AgentDeskService;
  /** The "Messaging" section of /settings: the portal's keywords, replies and mark-read. */
  messagingSettings: {
    /** The portal's settings (the defaults when it never saved any). */
    read: (portalId: number) => Promise<MessagingSettings>;
    /** Store checked settings; audits which ones changed (never their values). */
    change: (
      portalId: number,
      settings: MessagingSettings,
      context: { actor: Actor; requestId?: string | undefined },
    ) => Promise<unknown>;
  };
  /** A page of the portal's audit events, newest first (`after`: the previous page's last). */
  auditEvents: (
    portalId: number,
    page: { limit: number; after?: PagePosition | undefined },
  ) => Promise<AuditEvent[]>;
}

/** One business account (WABA) as the connection card shows it; names when known. */
export interface BusinessAccountListing {
  /** The WhatsApp Business Account id. */
  wabaId: string;
  name?: string | undefined;
  phoneNumbers: {
    phoneNumberId: string;
    displayPhoneNumber: string;
    verifiedName?: string;
    /** Where the number stands in the onboarding (it sends only when both steps are done). */
    onboarding?: NumberOnboarding;
    /** Its business portfolio's messaging limit, in words. */
    messagingLimit?: string;
  }[];
}

/** An uploaded medium, as the upload answers it. */
export interface InboxUpload {
  /** Our media id, `med_…`. */
  id: string;
  /** The type detected from the content. */
  mimeType: string;
  /** Bytes. */
  size: number;
  /** The kind detected, when the upload says. */
  kind?: 'image' | 'video' | 'audio' | 'document' | 'sticker' | undefined;
}

export const HtmlPage = Type.String({ description: 'An HTML page (text/html).' });
export const Redirect = Type.String({ description: 'Redirect; see Location.' });
export const FormField = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
export const CsrfBody = Type.Object({ csrf: FormField(100) });

/** One form post's work, once the area's guard checked the session, its CSRF token and role. */
export type AdminChange = (
  session: WebSession,
  request: FastifyRequest,
  reply: FastifyReply,
) => Promise<unknown>;

/**
 * A form post of an area of the administrators (whose guard already refused anyone else):
 * what the change throws goes to `refused`, which answers the refusals it knows and rethrows
 * anything else.
 */
export function adminChange(
  refused: (err: unknown, ...args: Parameters<AdminChange>) => Promise<unknown>,
) {
  return (run: AdminChange) => async (request: FastifyRequest, reply: FastifyReply) => {
    const session = signedIn(request);
    try {
      return await run(session, request, reply);
    } catch (err) {
      return refused(err, session, request, reply);
    }
  };
}
