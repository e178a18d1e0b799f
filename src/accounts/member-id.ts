/**
 * How the API names a member of a portal (a row of `users`): `usr_` and the user's id in
 * decimal, e.g. `usr_42`. The id is the one `GET /auth/verify` gives as `userId`; the prefix
 * makes an assignee or an author recognisable beside the other typed ids (`cnv_…`, `ctc_…`).
 *
 * @see docs/decisions/0064-conversations-worked-by-a-team.md
 */

const MEMBER_ID = /^usr_([1-9][0-9]{0,9})$/;

/** `usr_<id>` for user `userId` (a positive integer). */
export function memberId(userId: number): string {
  return `usr_${userId}`;
}

/** `usr_<id>` for user `userId`, or null for null. */
export function memberIdOrNull(userId: number | null): string | null {
  return userId === null ? null : memberId(userId);
}

/**
 * The user id a `usr_<id>` names; null when `value` is not of that shape (or is beyond a
 * PostgreSQL integer).
 */
export function parseMemberId(value: string): number | null {
  const m = MEMBER_ID.exec(value);
  if (!m) return null;
  const id = Number(m[1]);
  return id <= 2_147_483_647 ? id : null;
}
