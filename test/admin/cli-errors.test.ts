/**
 * A service's refusal reaches the CLI with its code and message, whichever process ran the
 * command (the CLI on a data directory no server holds, or the running server through its
 * admin socket), and the exit status means what docs/reference/cli.md "Output and exit statuses"
 * says: 1 refused, 3 could not run.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runCli, startServer, tempDataDir, type CliResult } from '../helpers/spawn.ts';

/** `{"error":{"code","message"}}` on stderr. */
const jsonError = (res: CliResult) =>
  (JSON.parse(res.stderr) as { error: { code: string; message: string } }).error;

describe('admin CLI: errors keep their code and message', () => {
  const env = { DATA_DIR: tempDataDir() };

  test('without a server, then through the running server', async (t) => {
    const created = await runCli(
      t,
      ['portal', 'create', '--name', 'E', '--admin-email', 'e@e.test', '--code', '8301'],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const base = ['--portal', '8301'];
    const check = async (where: string) => {
      const badUrl = await runCli(
        t,
        ['webhook', 'add', ...base, '--url', 'ftp://x', '--events', 'foo', '--json'],
        env,
      );
      assert.equal(badUrl.code, 1, `${where}: ${badUrl.stderr}`);
      assert.equal(jsonError(badUrl).code, 'invalid_request', where);
      assert.match(jsonError(badUrl).message, /^url: must use https:/, where);

      const plain = await runCli(
        t,
        ['webhook', 'add', ...base, '--url', 'ftp://x', '--events', 'foo'],
        env,
      );
      assert.equal(plain.code, 1, where);
      assert.match(plain.stderr, /^error: url: must use https:/, where);
      assert.doesNotMatch(plain.stderr, /Bad Request|\n\s+at /, where);

      const noEndpoint = await runCli(
        t,
        ['webhook', 'test', ...base, '--id', 'ep_nope', '--json'],
        env,
      );
      assert.equal(noEndpoint.code, 1, `${where}: ${noEndpoint.stderr}`);
      assert.equal(jsonError(noEndpoint).code, 'not_found', where);
      assert.match(jsonError(noEndpoint).message, /^No webhook endpoint with this id \(looked in/);

      const negative = await runCli(
        t,
        ['credit', 'add', ...base, '--amount', '-5', '--note', 'x', '--json'],
        env,
      );
      assert.equal(negative.code, 1, where);
      assert.equal(jsonError(negative).code, 'refused', where);
      assert.match(jsonError(negative).message, /--amount must be a positive whole number/);
    };
    await check('without a server');
    const server = await startServer(t, env);
    await check('through the server');
    assert.ok(
      !server.output.some((l) => /"level":50/.test(l)),
      'a refusal is not logged as an error',
    );
  });
});
