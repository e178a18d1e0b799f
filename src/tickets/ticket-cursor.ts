/** The cursor of `GET /support/tickets` (see external-api/keyset-cursor.ts). */
import { keysetCursor } from '../external-api/keyset-cursor.ts';

export const { encodeCursor, decodeCursor } = keysetCursor(/^tkt_[0-9A-Za-z]{1,60}$/);
