/**
 * The admin CLI as a new operator meets it: errors as JSON with `--json`, "no portal" saying
 * where it looked, no silent `./data`, the listings and the scope catalog, required options
 * marked, no validator phrases, and `user set-password` at a real terminal (a pseudo-terminal
 * from util-linux `script`).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { SCOPES, SCOPE_WORDS } from '../../src/accounts/scopes.ts';
import {
  builtEntry,
  childEnv,
  runCli,
  spawnNode,
  STARTUP_MS,
  tempDataDir,
  type Hookable,
} from '../helpers/spawn.ts';
import { createPostgresDatabase } from '../helpers/storage.ts';

const VALIDATOR_WORDING = /NOT|>=|<=|must match|\/limit|instancePath/;

/** `{"error":{"code","message"}}` on stderr, nothing on stdout. */
function jsonError(res: { stdout: string; stderr: string }) {
  assert.equal(res.stdout, '');
  const parsed = JSON.parse(res.stderr) as { error: { code: string; message: string } };
  assert.deepEqual(Object.keys(parsed.error), ['code', 'message']);
  return parsed.error;
}

describe('admin CLI: the first hour', () => {
  const dataDir = tempDataDir();
  const env = { DATA_DIR: dataDir };

  test('the data directory: created only by a creating command, and said', async (t) => {
    const fresh = join(tempDataDir(), 'portico');
    const show = await runCli(t, ['portal', 'show', '--portal', '1234'], { DATA_DIR: fresh });
    assert.equal(show.code, 1);
    assert.match(show.stderr, new RegExp(`No data directory at ${fresh}, so no portal`));
    assert.equal(existsSync(fresh), false, 'a read does not create the directory');

    // Forgetting DATA_DIR: the message says so and names ./data of the current directory.
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'portico-cwd-')));
    const { DATA_DIR: _unset, ...rest } = childEnv({});
    const run = spawnNode(t, [...builtEntry('cli'), 'portal', 'list', '--json'], {
      env: rest,
      cwd,
      input: '',
    });
    assert.equal(await run.waitForExit('portal list', STARTUP_MS), 1);
    const error = jsonError({ stdout: run.stdout(), stderr: run.stderr() });
    assert.equal(error.code, 'not_found');
    assert.match(error.message, new RegExp(`${join(cwd, 'data')} \\(DATA_DIR is not set`));
    assert.equal(existsSync(join(cwd, 'data')), false);

    const created = await runCli(
      t,
      ['portal', 'create', '--name', 'First', '--admin-email', 'first@x.test', '--code', '1234'],
      { DATA_DIR: fresh },
    );
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stderr, `Creating the data directory ${fresh}.\n`);
  });

  test('portal list, user list, scopes', async (t) => {
    const migrated = await runCli(t, ['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    const none = await runCli(t, ['portal', 'list'], env);
    assert.equal(none.stdout, `No portals in the data directory ${dataDir}.\n`);
    for (const [name, code] of [
      ['Alpha', '2001'],
      ['Beta', '2002'],
    ]) {
      const c = await runCli(
        t,
        [
          'portal',
          'create',
          '--name',
          name!,
          '--admin-email',
          `boss@${name}.test`,
          '--code',
          code!,
        ],
        env,
      );
      assert.equal(c.code, 0, c.stderr);
    }
    const user = ['user', 'create', '--portal', '2002', '--email', 'agent@beta.test'];
    assert.equal((await runCli(t, user, env)).code, 0);

    const portals = await runCli(t, ['portal', 'list'], env);
    assert.match(
      portals.stdout,
      /^2001 {2}Alpha {2}\(1 user, created .+\)\n2002 {2}Beta {2}\(2 users,/,
    );
    const listed = JSON.parse((await runCli(t, ['portal', 'list', '--json'], env)).stdout);
    assert.deepEqual(
      listed.map((p: { portalCode: string; users: number }) => [p.portalCode, p.users]),
      [
        ['2001', 1],
        ['2002', 2],
      ],
    );
    const users = await runCli(t, ['user', 'list', '--portal', '2002'], env);
    assert.equal(
      users.stdout,
      '2  boss@beta.test  main administrator  active  available\n' +
        '3  agent@beta.test  agent  active  available\n',
    );
    const json = JSON.parse(
      (await runCli(t, ['user', 'list', '--portal', '2002', '--json'], env)).stdout,
    );
    assert.deepEqual(
      json.map((m: { userId: number; email: string; role: string; status: string }) => [
        m.userId,
        m.email,
        m.role,
        m.status,
      ]),
      [
        [2, 'boss@beta.test', 'admin', 'active'],
        [3, 'agent@beta.test', 'agent', 'active'],
      ],
    );

    const scopes = await runCli(t, ['scopes'], env);
    assert.equal(scopes.code, 0);
    for (const scope of SCOPES) {
      assert.match(scopes.stdout, new RegExp(`^${scope} +${SCOPE_WORDS[scope]}$`, 'm'));
    }
    const catalog = JSON.parse((await runCli(t, ['scopes', '--json'], env)).stdout);
    assert.deepEqual(catalog[0], { scope: SCOPES[0], description: SCOPE_WORDS[SCOPES[0]] });
  });

  test('--json errors: same exit codes, a code and a message, nothing on stdout', async (t) => {
    const cases: [string[], Record<string, string>, number, string, RegExp][] = [
      [
        ['portal', 'create', '--name', 'X', '--json'],
        env,
        2,
        'usage',
        /required option '--admin-email/,
      ],
      [['frobnicate', '--json'], env, 2, 'usage', /unknown command/],
      [
        ['portal', 'show', '--portal', '9999', '--json'],
        env,
        1,
        'not_found',
        new RegExp(`^No portal with code 9999 \\(looked in the data directory ${dataDir}\\)\\.$`),
      ],
      [
        ['user', 'sign-out', '--portal', '2001', '--email', 'nobody@x.test', '--json'],
        env,
        1,
        'not_found',
        /has no user nobody@x\.test \(looked in the data directory/,
      ],
      [
        ['portal', 'create', '--name', 'X', '--admin-email', 'nope', '--json'],
        env,
        1,
        'refused',
        /Not an email address/,
      ],
      [
        ['portal', 'show', '--portal', '1', '--json'],
        { ...env, DATABASE_URL: 'mysql://nope' },
        2,
        'config',
        /^DATABASE_URL: expected a PostgreSQL connection URL/,
      ],
    ];
    for (const [args, caseEnv, exit, code, message] of cases) {
      const res = await runCli(t, args, caseEnv);
      assert.equal(res.code, exit, `${args.join(' ')}: ${res.stderr}`);
      const error = jsonError(res);
      assert.equal(error.code, code, args.join(' '));
      assert.match(error.message, message, args.join(' '));
    }
    // Without --json the same refusal is one plain line.
    const plain = await runCli(t, ['portal', 'show', '--portal', '9999'], env);
    assert.equal(plain.code, 1);
    assert.match(plain.stderr, /^error: No portal with code 9999 \(looked in the data directory /);
  });

  test('required options are marked in --help; no validator wording', async (t) => {
    const help = await runCli(t, ['portal', 'create', '--help'], env);
    assert.match(help.stdout, /--name <name> .*\(required\)/);
    assert.match(help.stdout, /--admin-email <email> .*\(required\)/);
    assert.doesNotMatch(help.stdout, /--code <digits> .*\(required\)/);
    const user = await runCli(t, ['user', 'set-password', '--help'], env);
    assert.match(user.stdout, /--portal <code> .*\(required\)/);

    const cases: [string[], number, RegExp][] = [
      [
        ['audit', 'list', '--portal', '2001', '--limit', '0'],
        2,
        /Give a whole number from 1 to 500/,
      ],
      [['contacts', 'list', '--portal', '2001', '--limit', 'ten'], 2, /whole number from 1 to 100/],
      [
        ['portal', 'create', '--name', 'X', '--admin-email', 'x@x.test', '--code', '1'.repeat(40)],
        1,
        /^error: portal create: --code must be at most 32 characters long\.$/m,
      ],
    ];
    for (const [args, exit, message] of cases) {
      const res = await runCli(t, args, env);
      assert.equal(res.code, exit, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, message);
      assert.doesNotMatch(res.stderr, VALIDATOR_WORDING);
    }
  });

  test('with PostgreSQL, "no portal" names the database and host, never the password', async (t) => {
    if (!process.env.TEST_DATABASE_URL) return t.skip('TEST_DATABASE_URL is not set');
    const database = await createPostgresDatabase();
    t.after(database.drop);
    const url = new URL(database.url);
    url.password = 'hunter2-secret';
    const res = await runCli(t, ['portal', 'show', '--portal', '9999', '--json'], {
      DATABASE_URL: url.toString(),
    });
    assert.equal(res.code, 1, res.stderr);
    const { message } = jsonError(res);
    const name = url.pathname.slice(1);
    assert.equal(
      message,
      `No portal with code 9999 (looked in the PostgreSQL database ${name} on ${url.hostname}:${url.port || '5432'}).`,
    );
    assert.doesNotMatch(res.stderr, /hunter2/);
  });

  test('user set-password at a terminal: asked twice, asked again when refused', async (t) => {
    const terminal = startInTerminal(
      t,
      ['user', 'set-password', '--portal', '2001', '--email', 'boss@alpha.test'],
      env,
    );
    await terminal.waitFor(/New password: $/);
    terminal.type('too short\r');
    await terminal.waitFor(/at least 12 characters\.\r?\nNew password: $/);
    terminal.type('a long enough password\r');
    await terminal.waitFor(/Repeat the password: $/);
    terminal.type('a different long password\r');
    await terminal.waitFor(/The two entries differ\.\r?\nNew password: $/);
    terminal.type('a long enough password\r');
    await terminal.waitFor(/Repeat the password: $/);
    terminal.type('a long enough password\r');
    assert.equal(await terminal.exited(), 0, terminal.output());
    assert.match(terminal.output(), /Password set for boss@alpha\.test/);
    assert.doesNotMatch(terminal.output(), /long enough|too short/, 'nothing typed is echoed');

    // A pipe still gives the first line, once.
    const piped = await runCli(
      t,
      ['user', 'set-password', '--portal', '2001', '--email', 'boss@alpha.test'],
      env,
      'another long password\nignored\n',
    );
    assert.equal(piped.code, 0, piped.stderr);
    const short = await runCli(
      t,
      ['user', 'set-password', '--portal', '2001', '--email', 'boss@alpha.test'],
      env,
      'short\n',
    );
    assert.equal(short.code, 1);
    assert.match(short.stderr, /at least 12 characters/);
  });
});

/**
 * The built CLI on a pseudo-terminal (`script -qfec`), its own process group killed in
 * `t.after`; every wait has a deadline.
 */
function startInTerminal(t: Hookable, args: string[], env: Record<string, string>) {
  const command = [process.execPath, ...builtEntry('cli'), ...args]
    .map((a) => `'${a.replaceAll("'", "'\\''")}'`)
    .join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: childEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
  const exit = new Promise<number | null>((resolve) => child.once('close', resolve));
  const within = <T>(what: string, p: Promise<T>) =>
    Promise.race([
      p,
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`${what} within ${STARTUP_MS} ms; output: ${output}`)),
          STARTUP_MS,
        ).unref(),
      ),
    ]);
  return {
    output: () => output,
    type: (text: string) => void child.stdin.write(text),
    waitFor: (pattern: RegExp) =>
      within(
        `no ${pattern}`,
        new Promise<void>((resolve) => {
          const check = () => {
            if (pattern.test(output)) resolve();
            else if (child.exitCode === null) setTimeout(check, 25).unref();
          };
          check();
        }),
      ),
    exited: () => within('no exit', exit),
  };
}
