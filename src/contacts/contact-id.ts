import { randomBase62 } from '../platform/crypto.ts';

/** Public contact id: `ctc_` + base62 of 16 random bytes. */
export function newContactId(): string {
  return `ctc_${randomBase62(16)}`;
}
