/**
 * What the account pages need, and the helpers they share. Each page plugin takes this narrow
 * set, never the whole services bag.
 *
 * @see docs/architecture.md "web/"
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AccountsService } from '../accounts/accounts-service.ts';
import type { AuditEvent } from '../audit/audit-log.ts';
import { redirectToLogin, type PageSessions } from '../browser/web-session.ts';
import type { WebSession } from '../browser/session-store.ts';
import type { ContactsService } from '../contacts/contacts-service.ts';
import type { PartnerService } from '../partner/partner-service.ts';
import type { WebhooksService } from '../webhooks/webhooks-service.ts';
import type { SignInLimitSettings } from './sign-in-limits.ts';

export interface WebRoutesOptions {
  sessions: PageSessions;
  /** Lifetime of a new session, in seconds. */
  sessionTtlSeconds: number;
  accounts: Pick<AccountsService, 'authenticatePassword' | 'showPortal' | 'regenerateToken'>;
  partner: Pick<PartnerService, 'connectionSummary' | 'authorizationUrl'>;
  /** Where the sign-in rate limits keep their counters (Redis when configured). */
  signInLimits: SignInLimitSettings;
  contacts: Pick<
    ContactsService,
    'listContacts' | 'getContact' | 'eraseContact' | 'importContacts'
  >;
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
  >;
  /** The portal's most recent audit events, newest first. */
  recentAuditEvents: (portalId: number) => Promise<AuditEvent[]>;
}

export const HtmlPage = Type.String({ description: 'An HTML page (text/html).' });
export const Redirect = Type.String({ description: 'Redirect; see Location.' });
export const FormField = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
export const CsrfBody = Type.Object({ csrf: FormField(100) });

/** The session, or null after sending a redirect to /login that brings the visitor back. */
export async function sessionOr(
  sessions: PageSessions,
  request: FastifyRequest,
  reply: FastifyReply,
  next: string,
): Promise<WebSession | null> {
  const session = await sessions.read(request);
  if (!session) {
    if (request.cookies[sessions.names.session]) sessions.clearCookie(reply);
    redirectToLogin(reply, next);
  }
  return session;
}
