/**
 * The CLI reference (docs/reference/cli.md, `npm run docs:generate`) is made from the command
 * table: it names every command and option, and every option reaches the command.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { flagOf } from '../../src/cli/command.ts';
import { COMMANDS } from '../../src/cli/commands.ts';
import { cliReference } from '../../src/cli/reference.ts';

test('the reference names every command and every option', () => {
  const doc = cliReference();
  for (const command of COMMANDS) {
    assert.ok(doc.includes(`\`${command.name}\``), command.name);
    for (const key of Object.keys(command.options)) {
      assert.ok(doc.includes(`\`${flagOf(key)}`), `${command.name} ${flagOf(key)}`);
    }
    for (const spec of Object.values(command.positionals ?? {})) {
      assert.ok(doc.includes(`\`${command.name} ${spec.value}`), `${command.name} ${spec.value}`);
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
