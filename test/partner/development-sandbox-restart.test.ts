/**
 * `npm start` in development without provider settings runs the sandbox provider in its own
 * process; restarting it must not disconnect the portal. The sandbox keeps its state in the data
 * directory (sandbox-store.ts): the same app, the grant and the token issued, so after a
 * restart the connection is still active, the health check finds its token valid (and revokes
 * nothing), and a send reaches the provider.
 *
 * Real processes over real HTTP: the built server twice on one data directory, the admin CLI,
 * and the authorization flow walked as a browser would (sign-in, consent, the sandbox's dialog,
 * the callback) with fetch and a cookie jar.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseSetCookie } from 'set-cookie-parser';
import { cli, freePort } from '../helpers/browser.ts';
import { deadline } from '../helpers/deadlines.ts';
import { builtEntry, spawnNode, type Hookable, type Spawned } from '../helpers/spawn.ts';

const ADMIN = { email: 'admin@restart.test', code: '7301', password: 'a long enough password 1' };

/** The server as `npm start` runs it in development: no provider settings at all. */
function startDevelopment(t: Hookable, env: NodeJS.ProcessEnv): Spawned {
  return spawnNode(t, builtEntry('main'), { env });
}

/** A browser's cookies for one site, by name. */
class Jar {
  readonly cookies = new Map<string, string>();

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  take(res: Response): void {
    for (const c of parseSetCookie(res.headers.getSetCookie())) {
      if (c.value === '' || c.maxAge === 0) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
  }
}

/** One request without following redirects; the jar sends and keeps the cookies. */
async function visit(
  jar: Jar,
  url: string,
  form?: Record<string, string | string[]>,
): Promise<{ status: number; location: string; body: string }> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form ?? {}))
    for (const one of [v].flat()) body.append(k, one);
  const res = await fetch(url, {
    method: form ? 'POST' : 'GET',
    redirect: 'manual',
    headers: {
      cookie: jar.header(),
      ...(form && { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    ...(form && { body }),
  });
  jar.take(res);
  return {
    status: res.status,
    location: res.headers.get('location') ?? '',
    body: await res.text(),
  };
}

const csrfOf = (html: string) => {
  const m = /<input type="hidden" name="csrf" value="([^"]*)"/.exec(html);
  assert.ok(m, 'the page has a CSRF field');
  return m[1]!;
};

/** The named inputs of the sandbox dialog's form (hidden fields, the person, each permission). */
function dialogForm(html: string): Record<string, string[]> {
  const form: Record<string, string[]> = {};
  for (const m of html.matchAll(/<input[^>]*\bname="([^"]+)"[^>]*\bvalue="([^"]*)"/g))
    (form[m[1]!] ??= []).push(m[2]!.replaceAll('&amp;', '&'));
  return form;
}

/** Poll `check` until it returns a value, or fail naming `what` (and `seen()`) at the deadline. */
async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  seen: () => unknown = () => undefined,
): Promise<T> {
  const end = Date.now() + deadline(30_000);
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end)
      throw new Error(`${what}: not within the deadline; last seen ${JSON.stringify(seen())}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('a restart of npm start in development keeps the portal connected: health check, send', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-dev-restart-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const [port, sandboxPort] = [await freePort(), await freePort()];
  const appUrl = `http://localhost:${port}`;
  const env = (settings: Record<string, string>): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    PORT: String(port),
    SANDBOX_PROVIDER_PORT: String(sandboxPort),
    APP_BASE_URL: appUrl,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    ...settings,
  });

  // The portal and its administrator, made with the CLI before the server starts (README).
  const created = JSON.parse(
    await cli(t, env({}), [
      'portal',
      'create',
      '--name',
      'Restart',
      '--admin-email',
      ADMIN.email,
      '--code',
      ADMIN.code,
      '--json',
    ]),
  ) as { token: string };
  await cli(
    t,
    env({}),
    ['user', 'set-password', '--portal', ADMIN.code, '--email', ADMIN.email],
    `${ADMIN.password}\n`,
  );
  await cli(t, env({}), [
    'credit',
    'add',
    '--portal',
    ADMIN.code,
    '--amount',
    '100000',
    '--note',
    'restart test',
  ]);

  // First run: no health check yet (it runs after the restart, where it matters).
  const first = startDevelopment(t, env({ PROVIDER_HEALTH_CHECK_INTERVAL_MS: '0' }));
  await first.waitForLine(/Portico is serving/, 'the development server did not start');
  const appId = /"appId":"(sandbox[A-Za-z0-9]+)"/.exec(first.stdout())?.[1];
  assert.ok(appId, 'the sandbox app id is logged');

  // Connect as the administrator would in a browser.
  const jar = new Jar();
  const login = await visit(jar, `${appUrl}/login`);
  assert.equal(login.status, 200, login.body);
  const signedIn = await visit(jar, `${appUrl}/login`, {
    email: ADMIN.email,
    password: ADMIN.password,
    csrf: csrfOf(login.body),
  });
  assert.equal(signedIn.status, 303, signedIn.body);
  const connect = await visit(jar, `${appUrl}/connect`);
  assert.equal(connect.status, 200);
  const consent = await visit(jar, `${appUrl}/api/auth/partner/consent`, {
    csrf: csrfOf(connect.body),
  });
  assert.equal(consent.status, 303, consent.body);
  const start = await visit(jar, new URL(consent.location, appUrl).toString());
  assert.equal(start.status, 302, start.body);
  const dialogUrl = new URL(start.location);
  assert.equal(dialogUrl.port, String(sandboxPort), 'the dialog is the sandbox');
  const sandboxJar = new Jar();
  const dialog = await visit(sandboxJar, dialogUrl.toString());
  assert.equal(dialog.status, 200, dialog.body);
  const allowed = await visit(sandboxJar, new URL(dialogUrl.pathname, dialogUrl).toString(), {
    ...dialogForm(dialog.body),
    decision: 'allow',
  });
  assert.equal(allowed.status, 302, allowed.body);
  const callback = await visit(jar, allowed.location);
  assert.equal(callback.status, 302, callback.body);
  assert.match(callback.location, /\/authorized$/);

  // Stop it as a developer does (Ctrl-C, or `node --watch` restarting), then start again.
  assert.equal(await first.stop('SIGTERM'), 0, first.output.join('\n'));
  const second = startDevelopment(t, env({ PROVIDER_HEALTH_CHECK_INTERVAL_MS: '1000' }));
  await second.waitForLine(/Portico is serving/, 'the restarted server did not start');

  // The health check ran after the restart and checked the connection (the settings page
  // shows when; in the first run the checker was off) ...
  let lastChecked: string | undefined;
  const checked = await until(
    'the health check after the restart',
    async () => {
      const settings = await visit(jar, `${appUrl}/settings`);
      assert.equal(settings.status, 200, 'the session outlives the restart');
      lastChecked = /data-testid="last-checked">([^<]*)</.exec(settings.body)?.[1];
      // No such line: the connection is gone (what a revocation would show).
      if (lastChecked === undefined) return 'no active connection on /settings';
      return lastChecked.startsWith('Not yet') ? undefined : lastChecked;
    },
    () => lastChecked,
  );
  assert.notEqual(checked, 'no active connection on /settings');
  // ... and revoked nothing: the connection is active, no revocation in the audit.
  const audit = await cli(t, env({}), ['audit', 'list', '--portal', ADMIN.code, '--json']);
  assert.doesNotMatch(audit, /connection\.revoked/);
  assert.match(audit, /connection\.created/);

  // A send reaches the provider with the stored token.
  const api = `${appUrl}/api/v1/external`;
  const auth = { authorization: created.token, 'content-type': 'application/json' };
  const numbers = await fetch(`${api}/messaging/numbers`, { headers: auth });
  assert.equal(numbers.status, 200, 'the numbers are read from the provider');
  const from = ((await numbers.json()) as { data: { items: { id: string }[] } }).data.items[0]!.id;
  const sent = await fetch(`${api}/messaging/messages`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      from,
      to: '+16505551234',
      type: 'template',
      template: { name: 'hello_world', language: 'en_US' },
    }),
  });
  const accepted = (await sent.json()) as { data?: { id: string }; error?: { code: string } };
  assert.equal(sent.status, 202, JSON.stringify(accepted));
  const id = accepted.data!.id;
  const status = await until('the message sent', async () => {
    const read = await fetch(`${api}/messaging/messages/${id}`, { headers: auth });
    const body = (await read.json()) as { data: { status: string } };
    return ['sent', 'delivered', 'read', 'failed'].includes(body.data.status)
      ? body.data.status
      : undefined;
  });
  assert.notEqual(status, 'failed');

  // What made it so: the same sandbox app, from its state in the data directory.
  assert.equal(/"appId":"(sandbox[A-Za-z0-9]+)"/.exec(second.stdout())?.[1], appId);
  const stateFile = join(dataDir, 'sandbox-provider.json');
  assert.ok(existsSync(stateFile), 'the sandbox keeps its state in the data directory');
  assert.equal(statSync(stateFile).mode & 0o077, 0, 'readable by its owner only');
  assert.equal(await second.stop('SIGTERM'), 0, second.output.join('\n'));
});
