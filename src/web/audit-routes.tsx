/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/audit`: the portal's audit log in the customer's words, 50 events a page, newest first,
 * paged by event id (`?before=`). `/settings` shows the first few through `readAuditRows`.
 *
 * @see docs/decisions/0009-pages.md
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { PortalSummary } from '../accounts/accounts-service.ts';
import { sendPage } from '../browser/render.ts';
import type { WebSession } from '../browser/session-store.ts';
import { auditRows, type AuditRow } from './audit-words.ts';
import { AuditPage } from './pages/audit-table.tsx';
import { HtmlPage, Redirect, sessionOr, type WebRoutesOptions } from './web-options.ts';

/** Events on one page of `/audit`. */
export const AUDIT_PAGE_SIZE = 50;

const AuditQuery = Type.Object({
  before: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
});

/**
 * A page of the portal's events in the customer's words, and whether older ones exist (one
 * more is read than shown).
 */
export async function readAuditRows(
  opts: Pick<WebRoutesOptions, 'auditEvents' | 'partner'>,
  session: WebSession,
  portal: PortalSummary,
  page: { limit: number; before?: number | undefined },
): Promise<{ rows: AuditRow[]; olderBefore: number | null }> {
  const events = await opts.auditEvents(session.portalId, {
    limit: page.limit + 1,
    before: page.before,
  });
  const shown = events.slice(0, page.limit);
  const rows = auditRows(shown, {
    userEmails: new Map(portal.users.map((u) => [String(u.userId), u.email])),
    providerName: opts.partner.providerName,
    tokenIssuedAt: portal.token?.createdAt ?? null,
  });
  const last = shown.at(-1);
  return { rows, olderBefore: events.length > page.limit && last ? last.id : null };
}

export async function auditRoutes(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const { sessions, accounts } = opts;
  app.get<{ Querystring: Static<typeof AuditQuery> }>(
    '/audit',
    { schema: { querystring: AuditQuery, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const session = await sessionOr(sessions, request, reply, '/audit');
      if (!session) return reply;
      const portal = await accounts.showPortal(session.portalCode);
      const { before } = request.query;
      const { rows, olderBefore } = await readAuditRows(opts, session, portal, {
        limit: AUDIT_PAGE_SIZE,
        before,
      });
      return sendPage(
        reply,
        <AuditPage
          signedIn={{ email: session.email, csrfToken: session.csrfToken }}
          rows={rows}
          olderBefore={olderBefore}
          paged={before !== undefined}
        />,
      );
    },
  );
}
