/**
 * CSV files of contacts (the web upload and the CLI) → rows for the import, parsed by
 * csv-parse (RFC 4180: quotes, embedded commas and line breaks, a UTF-8 byte order mark).
 *
 * The header names the columns: `phone` (required), `email`, `firstName`, `lastName`
 * (`first_name`, `last_name` too, any case), `tags` (separated by `;`), `consent` (the
 * WhatsApp state); any other column is an attribute of that name. Empty cells are left out.
 *
 * @see https://www.rfc-editor.org/rfc/rfc4180
 * @see https://csv.js.org/parse/
 */
import { CsvError, parse } from 'csv-parse/sync';
import { UsageError } from '../platform/errors.ts';
import { IMPORT_MAX } from './contact-schemas.ts';

const KNOWN: Record<string, 'phone' | 'email' | 'firstName' | 'lastName' | 'tags' | 'consent'> = {
  phone: 'phone',
  email: 'email',
  firstname: 'firstName',
  first_name: 'firstName',
  lastname: 'lastName',
  last_name: 'lastName',
  tags: 'tags',
  consent: 'consent',
};

/** Largest CSV accepted, in bytes (1,000 wide rows fit with room to spare). */
export const CSV_MAX_BYTES = 1024 * 1024;

function rowOf(record: Record<string, string>): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  const attributes: Record<string, string> = {};
  for (const [header, value] of Object.entries(record)) {
    if (value === '') continue;
    const field = KNOWN[header.toLowerCase()];
    if (field === 'tags') {
      row.tags = value
        .split(';')
        .map((t) => t.trim())
        .filter(Boolean);
    } else if (field === 'consent') row.consent = { whatsapp: value };
    else if (field) row[field] = value;
    else attributes[header] = value;
  }
  if (Object.keys(attributes).length > 0) row.attributes = attributes;
  return row;
}

/**
 * Parse a CSV file into import rows; row `i` is on line `i + 2` (after the header).
 *
 * @throws UsageError for a file that is not CSV of contacts (no `phone` column, a line with
 *   the wrong number of cells, more than 1,000 rows), with the line at fault.
 */
export function contactsFromCsv(text: string | Buffer, maxRows = IMPORT_MAX): unknown[] {
  let records: Record<string, string>[];
  try {
    records = parse(text, {
      columns: (header: string[]) => header.map((h) => h.trim()),
      bom: true,
      trim: true,
      skip_empty_lines: true,
      max_record_size: 64 * 1024,
    });
  } catch (err) {
    if (err instanceof CsvError) {
      const line = (err as CsvError & { lines?: number }).lines;
      throw new UsageError(
        `The file is not valid CSV${line ? ` (line ${line})` : ''}: ${err.message}`,
      );
    }
    throw err;
  }
  const first = records[0];
  if (!first || !Object.keys(first).some((h) => h.toLowerCase() === 'phone')) {
    throw new UsageError(
      'The CSV needs a header line with a "phone" column, and at least one row.',
    );
  }
  if (records.length > maxRows) {
    throw new UsageError(`The CSV has ${records.length} rows; at most ${maxRows} in one import.`);
  }
  return records.map(rowOf);
}
