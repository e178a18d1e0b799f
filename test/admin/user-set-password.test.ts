import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runCommand } from '../../src/cli/commands.ts';
import { UsageError } from '../../src/platform/errors.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

for (const backend of backends()) {
  describe(`CLI user set-password (${backend.name})`, () => {
    test('sets a password the user can sign in with; refusals are clear', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const a = await createPortal(services, { code: '3131', email: 'a@example.test' });
      await createPortal(services, { code: '3232', email: 'b@example.test' });
      const result = await runCommand(services, 'user set-password', {
        portal: '3131',
        email: 'A@Example.test',
        password: 'a long enough password',
      });
      assert.deepEqual(result, { userId: a.userId, email: 'a@example.test', endedSessions: 0 });
      assert.deepEqual(
        await services.accounts.authenticatePassword('a@example.test', 'a long enough password'),
        { userId: a.userId },
      );
      const refusals: [Record<string, string>, RegExp][] = [
        [{ portal: '3131', email: 'a@example.test', password: 'short' }, /at least 12/],
        [
          { portal: '3131', email: 'b@example.test', password: 'a long enough password' },
          /has no user/,
        ],
        [
          { portal: '9999', email: 'a@example.test', password: 'a long enough password' },
          /No portal/,
        ],
      ];
      for (const [args, message] of refusals) {
        await assert.rejects(runCommand(services, 'user set-password', args), (err: unknown) => {
          assert.ok(err instanceof UsageError);
          assert.match(err.message, message);
          assert.ok(!err.message.includes(args.password!), 'the password is never echoed');
          return true;
        });
      }
      // b's password was not touched by the refused attempt on another portal.
      assert.equal(
        await services.accounts.authenticatePassword('b@example.test', 'a long enough password'),
        null,
      );
    });
  });
}
