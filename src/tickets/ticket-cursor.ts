/** The cursors of `GET /support/tickets` and of a ticket's comments (see external-api/keyset-cursor.ts). */
import { keysetCursor } from '../external-api/keyset-cursor.ts';

export const { encodeCursor, decodeCursor } = keysetCursor(/^tkt_[0-9A-Za-z]{1,60}$/);

const comments = keysetCursor(/^cmt_[0-9A-Za-z]{1,60}$/);
export const encodeCommentCursor = comments.encodeCursor;
export const decodeCommentCursor = comments.decodeCursor;
