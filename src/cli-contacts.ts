/**
 * The `contacts` commands of the admin CLI: list a page, import a `.csv` or `.json` file. The
 * file is read here and sent as import batches of 1,000 rows (one transaction each), so the
 * same admin command serves the CLI's own storage and a running server's admin socket.
 *
 * @see README.md "CRM contacts"
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { action, execute, json, portal, wholeNumber } from './cli-execute.ts';
import { parseConfig } from './config.ts';
import { contactsFromCsv } from './contacts/contact-csv.ts';
import { IMPORT_MAX, type Contact } from './contacts/contact-schemas.ts';
import type { ImportResult } from './contacts/contacts-service.ts';
import { UsageError } from './platform/errors.ts';

/** Rows of a contacts file: `.csv` (header line, see contact-csv.ts) or `.json` (an array). */
function readContactsFile(path: string): { rows: unknown[]; csv: boolean } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new UsageError(`Cannot read ${path}.`);
  }
  if (/\.csv$/i.test(path))
    return { rows: contactsFromCsv(text, Number.MAX_SAFE_INTEGER), csv: true };
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
  return { rows, csv: false };
}

/** `contacts list`, `contacts import`: the CRM contacts of a portal. */
export function addContactsCommands(program: Command): void {
  const contactsCmd = program.command('contacts').description('the CRM contacts of a portal');
  contactsCmd
    .command('list')
    .description('list contacts, newest first (one page; --cursor for the next)')
    .requiredOption(...portal)
    .option('--q <text>', 'prefix of first name, last name, email or phone digits')
    .option('--tag <tag>', 'only contacts with this tag')
    .option('--limit <n>', 'page size (1-100, default 50)', wholeNumber(1, 100))
    .option('--cursor <cursor>', 'the next-page cursor printed by the previous page')
    .addOption(json)
    .action(
      action(
        'contacts list',
        (o) => ({
          portal: o.portal,
          ...Object.fromEntries(
            ['q', 'tag', 'limit', 'cursor'].filter((k) => o[k] !== undefined).map((k) => [k, o[k]]),
          ),
        }),
        (r) => {
          const page = r as { items: Contact[]; nextCursor: string | null };
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
      ),
    );
  contactsCmd
    .command('import')
    .description('import contacts from a .csv or .json file, upserted by phone (1,000 per batch)')
    .requiredOption(...portal)
    .requiredOption(
      '--file <path>',
      '.csv (header: phone,email,firstName,lastName,tags,consent,…) or .json',
    )
    .addOption(json)
    .action(async (opts: Record<string, unknown>) => {
      const { rows, csv } = readContactsFile(String(opts.file));
      const config = parseConfig();
      const total: ImportResult = { created: 0, updated: 0, unchanged: 0, failed: [] };
      // Each batch is one transaction: a failure stops the import after the batches done.
      for (let start = 0; start < rows.length; start += IMPORT_MAX) {
        const batch = rows.slice(start, start + IMPORT_MAX);
        const args = { portal: opts.portal, contacts: batch };
        const r = (await execute(config, 'contacts import', args)) as ImportResult;
        total.created += r.created;
        total.updated += r.updated;
        total.unchanged += r.unchanged;
        total.failed.push(...r.failed.map((f) => ({ ...f, index: f.index + start })));
      }
      if (opts.json) return void process.stdout.write(`${JSON.stringify(total, null, 2)}\n`);
      const lines = [
        `Imported ${rows.length} row(s): ${total.created} created, ${total.updated} updated, ` +
          `${total.unchanged} unchanged, ${total.failed.length} not imported.`,
        ...total.failed.map(
          (f) => `  ${csv ? `line ${f.index + 2}` : `item ${f.index}`}: ${f.field} ${f.message}`,
        ),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    });
}
