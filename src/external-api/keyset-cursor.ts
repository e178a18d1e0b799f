/**
 * The opaque pagination cursor of the API's lists: base64url (RFC 4648 §5) of the JSON
 * `[createdAt ISO 8601, id]` of the last item of a page, in the newest-first order. Clients pass
 * it back unchanged. It names a position only; the portal comes from the token, so a cursor is
 * useless elsewhere.
 *
 * @see https://www.rfc-editor.org/rfc/rfc4648#section-5
 */
import { AppError } from '../platform/errors.ts';

/** A position in the newest-first order: the last item of the previous page. */
export interface PagePosition {
  createdAt: Date;
  id: string;
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The cursor codec of one list, whose ids match `idPattern` (e.g. `/^tkt_[0-9A-Za-z]{1,60}$/`).
 * `decodeCursor` throws AppError `invalid_request` (with `details` on `querystring.cursor`)
 * when the value is not a cursor this service produced.
 */
export function keysetCursor(idPattern: RegExp) {
  return {
    encodeCursor: (position: PagePosition): string =>
      Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.id]), 'utf8').toString(
        'base64url',
      ),

    decodeCursor: (cursor: string): PagePosition => {
      const invalid = () =>
        new AppError('invalid_request', 'The cursor is not valid; use the nextCursor of a page.', {
          details: [
            { field: 'querystring.cursor', message: 'is not a cursor from a previous page' },
          ],
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
    },
  };
}
