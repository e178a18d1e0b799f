/**
 * The `contacts` commands: list a page, import a `.csv` or `.json` file. The file is read by the
 * CLI and sent as import batches of 1,000 rows (one transaction each), so the same command
 * serves the CLI's own storage and a running server's admin socket.
 *
 * @see docs/reference/external-api.md "The capability areas"
 * @see docs/reference/cli.md
 */
import { readFileSync } from 'node:fs';
import { Type } from 'typebox';
import { contactsFromCsv } from '../contacts/contact-csv.ts';
import { IMPORT_MAX } from '../contacts/contact-schemas.ts';
import type { ImportResult } from '../contacts/contacts-service.ts';
import { UsageError } from '../platform/errors.ts';
import { defineCommand, Portal, portalOption, wholeNumber } from './command.ts';

/** Rows of a contacts file: `.csv` (header line, see contact-csv.ts) or `.json` (an array). */
function readContactsFile(path: string): unknown[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new UsageError(`Cannot read ${path}.`);
  }
  if (isCsv(path)) return contactsFromCsv(text, Number.MAX_SAFE_INTEGER);
  if (!/\.json$/i.test(path)) throw new UsageError('The file must end in .csv or .json.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${path} is not valid JSON.`);
  }
  const rows = Array.isArray(value) ? value : (value as { contacts?: unknown } | null)?.contacts;
  if (!Array.isArray(rows) || rows.length === 0) {
    throw new UsageError('The JSON file must be an array of contacts (or {"contacts": [...]}).');
  }
  return rows;
}

const isCsv = (path: unknown) => /\.csv$/i.test(String(path));

export const contactsList = defineCommand({
  name: 'contacts list',
  description: 'list contacts, newest first (one page; --cursor for the next)',
  args: Type.Object({
    portal: Portal,
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    tag: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  }),
  options: {
    portal: portalOption,
    q: { value: '<text>', description: 'prefix of first name, last name, email or phone digits' },
    tag: { value: '<tag>', description: 'only contacts with this tag' },
    limit: {
      value: '<n>',
      description: 'page size (1-100, default 50)',
      parse: wholeNumber(1, 100),
    },
    cursor: { value: '<cursor>', description: 'the next-page cursor printed by the previous page' },
  },
  run: async (services, { portal, limit, ...filters }) => {
    const portalId = await services.accounts.portalIdFor(portal);
    return services.contacts.listContacts({ portalId }, { limit: limit ?? 50, ...filters });
  },
  print: (page) => {
    if (page.items.length === 0) return 'No contacts.';
    const lines = page.items.map((c) =>
      [
        c.id,
        c.phone,
        [c.firstName, c.lastName].filter(Boolean).join(' '),
        c.email ?? '',
        c.tags.join(';'),
      ]
        .join('  ')
        .trimEnd(),
    );
    if (page.nextCursor) lines.push(`Next page: --cursor ${page.nextCursor}`);
    return lines.join('\n');
  },
});

export const contactsImport = defineCommand({
  name: 'contacts import',
  description: 'import contacts from a .csv or .json file, upserted by phone (1,000 per batch)',
  // One batch: the CLI reads the file and sends IMPORT_MAX rows at a time.
  args: Type.Object({
    portal: Portal,
    contacts: Type.Array(Type.Unknown(), { minItems: 1, maxItems: IMPORT_MAX }),
  }),
  options: {
    portal: portalOption,
    file: {
      value: '<path>',
      description: '.csv (header: phone,email,firstName,lastName,tags,consent,…) or .json',
      required: true,
    },
  },
  run: async (services, a): Promise<ImportResult> => {
    const portalId = await services.accounts.portalIdFor(a.portal);
    return services.contacts.importContacts({ portalId }, a.contacts, 'import');
  },
  send: async (o, exec) => {
    const rows = readContactsFile(String(o.file));
    const total: ImportResult = { created: 0, updated: 0, unchanged: 0, failed: [] };
    // Each batch is one transaction: a failure stops the import after the batches done.
    for (let start = 0; start < rows.length; start += IMPORT_MAX) {
      const r = await exec({
        portal: String(o.portal),
        contacts: rows.slice(start, start + IMPORT_MAX),
      });
      total.created += r.created;
      total.updated += r.updated;
      total.unchanged += r.unchanged;
      total.failed.push(...r.failed.map((f) => ({ ...f, index: f.index + start })));
    }
    return { ...total, rows: rows.length };
  },
  print: ({ rows, ...total }, { options }) =>
    [
      `Imported ${rows} row(s): ${total.created} created, ${total.updated} updated, ` +
        `${total.unchanged} unchanged, ${total.failed.length} not imported.`,
      ...total.failed.map(
        (f) =>
          `  ${isCsv(options.file) ? `line ${f.index + 2}` : `item ${f.index}`}: ${f.field} ${f.message}`,
      ),
    ].join('\n'),
  json: ({ rows: _rows, ...total }) => total,
});
