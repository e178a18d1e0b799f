/** The cursor of `GET /crm/contacts` (see external-api/keyset-cursor.ts). */
import { keysetCursor } from '../external-api/keyset-cursor.ts';

export type { PagePosition } from '../external-api/keyset-cursor.ts';

export const { encodeCursor, decodeCursor } = keysetCursor(/^ctc_[0-9A-Za-z]{1,60}$/);
