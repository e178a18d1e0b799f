/**
 * docs/cli.md is the reference made from the command table (`npm run docs:cli`): it fails here
 * when a command or option changed and the document was not made again.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { flagOf } from '../../src/cli/command.ts';
import { COMMANDS } from '../../src/cli/commands.ts';
import { cliReference } from '../../src/cli/reference.ts';
import { ROOT } from '../helpers/root.ts';

test('docs/cli.md is up to date with the command table (npm run docs:cli)', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
  assert.equal(doc, cliReference(), 'run `npm run docs:cli` and commit docs/cli.md');
});

test('the reference names every command and every option', () => {
  const doc = cliReference();
  for (const command of COMMANDS) {
    assert.ok(doc.includes(`\`${command.name}\``), command.name);
    for (const key of Object.keys(command.options)) {
      assert.ok(doc.includes(`\`${flagOf(key)}`), `${command.name} ${flagOf(key)}`);
    }
  }
});

test('every option of a command is an argument of it, or the command turns it into some', () => {
  for (const command of COMMANDS) {
    for (const key of Object.keys(command.options)) {
      assert.ok(
        key in command.args.properties || command.send !== undefined,
        `${command.name}: ${flagOf(key)}`,
      );
    }
  }
});
