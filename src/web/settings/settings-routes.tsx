/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/settings`: the portal, its API token (regenerated here by an administrator, after a
 * confirmation page), the provider connection and the recent audit events; and the
 * confirmation pages of the two destructive actions (regenerate the token, disconnect).
 *
 * The new token travels POST → 303 → GET: the POST keeps it server-side in the session for one
 * read (`PageSessions.stashOnce`, never in a URL), so a reload of the page shows it no more and
 * never "This form has expired".
 *
 * The "Messaging" section posts to `/settings/messaging` (an administrator): checked by
 * `parseSettings`, a refusal comes back as the page with each error beside its field and what
 * was typed kept (400, nothing stored); a success redirects with a flash.
 *
 * @see docs/architecture.md "web/"
 * @see docs/messaging.md "Opt-out keywords"
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { flashOf } from '../../browser/flash.tsx';
import { sendNotAllowed } from '../../browser/refusal-pages.tsx';
import { sendPage } from '../../browser/render.ts';
import type { WebSession } from '../../browser/session-store.ts';
import { readAuditRows } from '../audit/audit-routes.tsx';
import { confirmRoutes, ONLY_MAIN_ADMIN_TOKEN } from './confirm-routes.tsx';
import { guardPortalArea, signedIn } from '../page-area.ts';
import { SettingsPage } from './settings-page.tsx';
import { limitWords } from '../messages/messages-page-cards.tsx';
import { AppError } from '../../platform/errors.ts';
import { parseSettings } from '../../messaging/conversations/messaging-settings.ts';
import type { MessagingSettingsForm } from './messaging-settings-form.tsx';
import {
  FormField,
  HtmlPage,
  Redirect,
  type BusinessAccountListing,
  type WebRoutesOptions,
} from '../web-options.ts';

/** Recent events on /settings; the rest are on /audit. */
const SETTINGS_AUDIT_ROWS = 10;

const SettingsQuery = Type.Object({ done: FormField(32) });
const ConfirmBody = Type.Object({ csrf: FormField(100), confirm: FormField(10) });
/** Longer than the settings allow, so that a too-long value gets its field's error. */
const MessagingBody = Type.Object({
  csrf: FormField(100),
  optOutKeywords: FormField(4000),
  optInKeywords: FormField(4000),
  optOutReply: FormField(8000),
  optInReply: FormField(8000),
  autoMarkRead: FormField(10),
});
const CsrfBody = Type.Object({ csrf: FormField(100) });
const ONLY_MAIN_ADMIN_ONBOARDING =
  'Only an administrator of the portal can retry the onboarding of its numbers.';
const ONLY_MAIN_ADMIN_MESSAGING =
  'Only an administrator of the portal can change the messaging settings.';
/** The `/settings` area: the page, its forms and the confirmation pages of its two actions. */
export async function settingsRoutes(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const { sessions, accounts, partner } = opts;
  guardPortalArea(app, sessions, { home: '/settings' });
  await app.register(confirmRoutes, opts);

  async function renderSettings(
    request: FastifyRequest,
    reply: FastifyReply,
    session: WebSession,
    extra: {
      newToken?: string | undefined;
      flash?: ReturnType<typeof flashOf>;
      messagingForm?: MessagingSettingsForm;
    } = {},
    status = 200,
  ) {
    const [portal, connection, businessAccounts, activeSessions, messaging, signals] =
      await Promise.all([
        accounts.showPortal(session.portalCode),
        partner.connectionSummary(session.portalId).catch((err: unknown) => {
          request.log.error({ err }, 'connection summary failed');
          return null;
        }),
        businessAccountsOf(opts.messaging.provider, session.portalId).catch((err: unknown) => {
          request.log.warn({ err }, 'business accounts listing failed');
          return null;
        }),
        sessions.store.countActive(session.userId),
        opts.messagingSettings.read(session.portalId),
        opts.messaging.accountSignals?.(session.portalId) ?? [],
      ]);
    const audit = await readAuditRows(opts, session, portal, { limit: SETTINGS_AUDIT_ROWS });
    return sendPage(
      reply,
      <SettingsPage
        portal={{ code: portal.portalCode, name: portal.name }}
        user={{
          id: session.userId,
          email: session.email,
          isMainAdmin: session.isMainAdmin,
          isAdmin: session.isAdmin,
        }}
        activeSessions={activeSessions}
        csrfToken={session.csrfToken}
        token={portal.token}
        newToken={extra.newToken}
        connection={{ providerName: partner.providerName, connection, businessAccounts }}
        auditRows={audit.rows}
        moreAudit={audit.olderCursor !== null}
        flash={extra.flash}
        messaging={{ settings: messaging, form: extra.messagingForm }}
        accountSignals={signals}
      />,
      status,
    );
  }

  app.get<{ Querystring: Static<typeof SettingsQuery> }>(
    '/settings',
    { schema: { querystring: SettingsQuery, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const session = signedIn(request);
      const flash = flashOf(request.query);
      if (flash?.key === 'regenerated') {
        const newToken = await sessions.takeOnce(request);
        if (newToken) return renderSettings(request, reply, session, { newToken });
      }
      return renderSettings(request, reply, session, { flash });
    },
  );

  app.post<{ Body: Static<typeof ConfirmBody> }>(
    '/settings/token',
    { schema: { body: ConfirmBody, response: { 303: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      const session = signedIn(request);
      if (!session.isAdmin) return sendNotAllowed(reply, session, ONLY_MAIN_ADMIN_TOKEN);
      if (request.body.confirm !== 'yes') return reply.redirect('/settings/token/regenerate', 303);
      const { token } = await accounts.regenerateToken({
        portalCode: session.portalCode,
        actor: { type: 'user', id: String(session.userId) },
      });
      // Kept for the next page only, sealed in the session; the CSRF token is spent, so a
      // replayed POST (Back, then resend) cannot regenerate a second time.
      await sessions.stashOnce(request, token);
      await sessions.store.rotateCsrf(session.idHash);
      request.log.info({ userId: session.userId }, 'API token regenerated from settings');
      return reply.redirect('/settings?done=regenerated#api-token', 303);
    },
  );

  // Retry: run the onboarding of the connection again (subscribe, register what is not yet).
  // Not destructive, so no confirmation step.
  app.post<{ Body: Static<typeof CsrfBody> }>(
    '/settings/onboarding',
    { schema: { body: CsrfBody, response: { 303: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      const session = signedIn(request);
      if (!session.isAdmin) return sendNotAllowed(reply, session, ONLY_MAIN_ADMIN_ONBOARDING);
      const outcome = await partner.onboardConnection(session.portalId);
      const done = outcome.ran
        ? 'onboarding_retried'
        : outcome.reason === 'claimed'
          ? 'onboarding_busy'
          : 'onboarding_failed';
      return reply.redirect(`/settings?done=${done}#connection`, 303);
    },
  );

  app.post<{ Body: Static<typeof MessagingBody> }>(
    '/settings/messaging',
    {
      schema: {
        body: MessagingBody,
        response: { 200: HtmlPage, 303: Redirect, 400: HtmlPage, 403: HtmlPage },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const body = request.body;
      if (!session.isAdmin) return sendNotAllowed(reply, session, ONLY_MAIN_ADMIN_MESSAGING);
      const values = {
        optOutKeywords: body.optOutKeywords ?? '',
        optInKeywords: body.optInKeywords ?? '',
        optOutReply: body.optOutReply ?? '',
        optInReply: body.optInReply ?? '',
        autoMarkRead: body.autoMarkRead === 'yes',
      };
      const parsed = parseSettings(values);
      if (!parsed.ok) {
        const errors: MessagingSettingsForm['errors'] = {};
        for (const problem of parsed.problems) errors[problem.field] ??= problem.message;
        return renderSettings(request, reply, session, { messagingForm: { values, errors } }, 400);
      }
      await opts.messagingSettings.change(session.portalId, parsed.settings, {
        actor: { type: 'user', id: String(session.userId) },
        requestId: request.id,
      });
      return reply.redirect('/settings?done=messaging_saved#messaging', 303);
    },
  );
}

/**
 * The connection card's business accounts with their phone numbers by name, from the Cloud API
 * (cached briefly by messaging's provider adapter); [] without an active connection.
 *
 * @throws AppError `provider_error` / `provider_timeout` when the provider cannot answer.
 */
async function businessAccountsOf(
  provider: WebRoutesOptions['messaging']['provider'],
  portalId: number,
): Promise<BusinessAccountListing[]> {
  let listed;
  try {
    listed = await provider.numbers(portalId);
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_connected') return [];
    throw err;
  }
  const accounts = new Map<string, BusinessAccountListing>();
  for (const n of listed) {
    const account = accounts.get(n.wabaId) ?? { wabaId: n.wabaId, phoneNumbers: [] };
    account.phoneNumbers.push({
      phoneNumberId: n.id,
      displayPhoneNumber: n.displayPhoneNumber,
      verifiedName: n.verifiedName,
      onboarding: n.onboarding,
      messagingLimit: limitWords(n),
    });
    accounts.set(n.wabaId, account);
  }
  return [...accounts.values()];
}
