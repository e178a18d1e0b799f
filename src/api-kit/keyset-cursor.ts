/**
 * The opaque pagination cursor of the API's lists: base64url (RFC 4648 §5) of the JSON
 * `[createdAt ISO 8601, id]` of the last item of a page, in the newest-first order. Clients pass
 * it back unchanged. It names a position only; the portal comes from the token, so a cursor is
 * useless elsewhere.
 *
 * @see https://www.rfc-editor.org/rfc/rfc4648#section-5
 */
import type { KeysetPage, PagePosition } from '../db/keyset-page.ts';
import { AppError } from '../platform/errors.ts';

export type { PagePosition };

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The cursor codec of one list, whose ids match `idPattern` (e.g. `/^tkt_[0-9A-Za-z]{1,60}$/`).
 * `decodeCursor` (and `after`) throw AppError `invalid_request` (with `details` on
 * `querystring.cursor`) when the value is not a cursor this service produced.
 */
export function keysetCursor(idPattern: RegExp) {
  const encodeCursor = (position: PagePosition): string =>
    Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.id]), 'utf8').toString(
      'base64url',
    );
  const decodeCursor = (cursor: string): PagePosition => {
    const invalid = () =>
      new AppError('invalid_request', 'The cursor is not valid; use the nextCursor of a page.', {
        details: [{ field: 'querystring.cursor', message: 'is not a cursor from a previous page' }],
      });
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    if (!Array.isArray(value) || value.length !== 2) throw invalid();
    const [createdAt, id] = value as unknown[];
    if (typeof createdAt !== 'string' || !ISO_UTC.test(createdAt)) throw invalid();
    if (typeof id !== 'string' || !idPattern.test(id)) throw invalid();
    const date = new Date(createdAt);
    if (Number.isNaN(date.getTime()) || date.toISOString() !== createdAt) throw invalid();
    return { createdAt: date, id };
  };
  return {
    encodeCursor,
    decodeCursor,
    /** Where the page asked for starts: undefined (the first page) when no cursor was sent. */
    after: (cursor: string | undefined): PagePosition | undefined =>
      cursor === undefined ? undefined : decodeCursor(cursor),
    /** The API's page: the items, and the cursor of the next page (null on the last one). */
    page: <Row extends PagePosition, Item>(
      { rows, hasMore }: KeysetPage<Row>,
      toItem: (row: Row) => Item,
    ): { items: Item[]; nextCursor: string | null } => {
      const last = rows.at(-1);
      return {
        items: rows.map((row) => toItem(row)),
        nextCursor: hasMore && last ? encodeCursor(last) : null,
      };
    },
  };
}
