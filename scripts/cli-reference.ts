/**
 * Prints the admin CLI's reference (Markdown, every command with its options) made from the
 * command table in src/cli/commands.ts: `npm run docs:cli` writes it to docs/cli.md, and
 * test/admin/cli-reference.test.ts fails when docs/cli.md differs.
 *
 * Usage: node --import tsx scripts/cli-reference.ts > docs/cli.md
 */
import process from 'node:process';
import { cliReference } from '../src/cli/reference.ts';

process.stdout.write(cliReference());
