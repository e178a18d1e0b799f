/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/audit`: the portal's audit log in the customer's words, 50 events a page, newest first,
 * keyset pages on `(occurred_at, id)` (`?cursor=`, the API's opaque cursor of the last event
 * shown): every page costs the same, however deep. `/settings` shows the first few through
 * `readAuditRows`.
 *
 * @see docs/decisions/0009-pages.md
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { PortalSummary } from '../../accounts/accounts-service.ts';
import { auditPosition } from '../../audit/audit-log.ts';
import { sendPage } from '../../browser/render.ts';
import type { WebSession } from '../../browser/session-store.ts';
import { keysetCursor } from '../../api-kit/keyset-cursor.ts';
import { auditRows, type AuditRow } from './audit-words.ts';
import { AuditPage } from './audit-table.tsx';
import { guardPortalArea, signedIn } from '../page-area.ts';
import { HtmlPage, Redirect, type WebRoutesOptions } from '../web-options.ts';

/** Events on one page of `/audit`. */
export const AUDIT_PAGE_SIZE = 50;

/** The cursor of `/audit`'s pages: an event's time and id. */
const auditCursor = keysetCursor(/^[1-9][0-9]{0,15}$/);

const AuditQuery = Type.Object({
  cursor: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,200}$' })),
});

/**
 * A page of the portal's events in the customer's words, and the cursor of the next (older)
 * page, null on the last (one more event is read than shown).
 *
 * @throws AppError `invalid_request` for a cursor this service did not produce.
 */
export async function readAuditRows(
  opts: Pick<WebRoutesOptions, 'auditEvents' | 'partner'>,
  session: WebSession,
  portal: PortalSummary,
  page: { limit: number; cursor?: string | undefined },
): Promise<{ rows: AuditRow[]; olderCursor: string | null }> {
  const events = await opts.auditEvents(session.portalId, {
    limit: page.limit + 1,
    after: auditCursor.after(page.cursor),
  });
  const shown = events.slice(0, page.limit);
  const rows = auditRows(shown, {
    userEmails: new Map(portal.users.map((u) => [String(u.userId), u.email])),
    providerName: opts.partner.providerName,
    tokenIssuedAt: portal.token?.createdAt ?? null,
  });
  const last = shown.at(-1);
  return {
    rows,
    olderCursor:
      events.length > page.limit && last ? auditCursor.encodeCursor(auditPosition(last)) : null,
  };
}

export async function auditRoutes(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const { sessions, accounts } = opts;
  guardPortalArea(app, sessions, { home: '/audit' });
  app.get<{ Querystring: Static<typeof AuditQuery> }>(
    '/audit',
    { schema: { querystring: AuditQuery, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const session = signedIn(request);
      const portal = await accounts.showPortal(session.portalCode);
      const { cursor } = request.query;
      const { rows, olderCursor } = await readAuditRows(opts, session, portal, {
        limit: AUDIT_PAGE_SIZE,
        cursor,
      });
      return sendPage(
        reply,
        <AuditPage
          signedIn={{ email: session.email, csrfToken: session.csrfToken }}
          rows={rows}
          olderCursor={olderCursor}
          paged={cursor !== undefined}
        />,
      );
    },
  );
}
