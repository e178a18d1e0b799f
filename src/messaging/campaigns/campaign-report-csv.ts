/**
 * A campaign's per-recipient outcomes as CSV (RFC 4180, through csv-stringify), streamed a page
 * of `PAGE` recipients at a time: the report of a 100,000-recipient campaign never sits in
 * memory whole. Columns: `seq`, `contactId` (empty once the contact is erased), `outcome`,
 * `reason`, `messageId`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc4180
 * @see https://csv.js.org/stringify/
 */
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { CampaignsService } from './campaigns-service.ts';

const PAGE = 1000;
const COLUMNS = ['seq', 'contactId', 'outcome', 'reason', 'messageId'];

/** The CSV stream of campaign `id`'s report (the campaign was read before: it exists). */
export function reportCsv(
  campaigns: Pick<CampaignsService, 'report'>,
  principal: { portalId: number },
  id: string,
): Readable {
  async function* rows() {
    let after: number | null = 0;
    while (after !== null) {
      const page = await campaigns.report(principal, id, { after, limit: PAGE });
      for (const r of page.recipients)
        yield [r.seq, r.contactId ?? '', r.outcome, r.reason ?? '', r.messageId ?? ''];
      after = page.nextAfter;
    }
  }
  return Readable.from(rows(), { objectMode: true }).pipe(
    stringify({ header: true, columns: COLUMNS }),
  );
}
