/**
 * The active members of a portal as the pages offer them (an assignee's choice): each user's API name
 * (`usr_<id>`, member-id.ts) and email, in email order.
 *
 * @see docs/decisions/0064-conversations-worked-by-a-team.md
 */
import { and, asc, eq } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { users } from '../db/schema/users.ts';
import { memberId } from './member-id.ts';

/** A member of a portal: `usr_<id>` and their email. */
export interface PortalMember {
  id: string;
  email: string;
}

/** The portal's active users: a disabled member is offered no work (one indexed read). */
export async function listPortalMembers(db: Database, portalId: number): Promise<PortalMember[]> {
  const rows = await db
    .select({ id: users.id, email: users.email })
    .from(users)
    .where(and(eq(users.portalId, portalId), eq(users.status, 'active')))
    .orderBy(asc(users.email));
  return rows.map((r) => ({ id: memberId(r.id), email: r.email }));
}
