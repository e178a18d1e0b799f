/**
 * The repository's filter of a list page, from the query of `GET /crm/contacts`: one home, used
 * by the service and by the contacts bench (which explains the statement it gives).
 */
import type { ListContactsQuery } from './contact-schemas.ts';
import type { ContactFilter } from './contacts-repository.ts';
import { phoneDigitsOf } from './phone.ts';

/**
 * The repository's filter for a list query's `tag`, `consent`, `q`, `updatedSince` and
 * `waUserId`.
 */
export function listFilter(query: {
  [K in keyof ListContactsQuery]?: ListContactsQuery[K] | undefined;
}): ContactFilter {
  const q = query.q?.trim();
  return {
    tag: query.tag,
    consent: query.consent,
    textPrefix: q ? q.toLowerCase() : undefined,
    phoneDigits: q ? (phoneDigitsOf(q) ?? undefined) : undefined,
    updatedSince: query.updatedSince ? new Date(query.updatedSince) : undefined,
    waUserId: query.waUserId,
  };
}
