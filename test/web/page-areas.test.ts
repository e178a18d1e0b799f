/**
 * Every page route stands behind its page area's guard (src/web/page-area.ts), and the guard
 * holds for each of them: the routes are read from the app itself (`printRoutes` with hooks), so
 * a route added later is checked too, and one registered outside any page area fails here until
 * it is put in an area or named below as open, with its reason.
 *
 * @see docs/decisions/0054-page-areas.md
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';

/** Page routes (the pages' context: cookies, forms) that are in no page area, and why. */
const OPEN: Record<string, string> = {
  'GET /': 'a redirect to /settings',
  'GET /favicon.ico': 'a redirect to the icon',
  'GET /assets/portico.css': 'a static file',
  'GET /assets/favicon.svg': 'a static file',
  'GET /assets/one-time-token.js': 'a static file',
  'GET /assets/inbox.js': 'a static file',
  'GET /docs': 'the public API reference',
  'GET /docs/': 'the public API reference',
  'GET /docs/openapi.json': 'the public API reference',
  'GET /docs/openapi.yaml': 'the public API reference',
  'GET /docs/js/scalar.js': 'the public API reference',
  'GET /data-deletion': "the provider's data-deletion status page (public by the provider's rules)",
  'POST /api/auth/partner/consent': 'the connection flow (partner/oauth): checks session and CSRF',
  'GET /api/auth/partner/start':
    'the connection flow (partner/oauth): consent bound to the session',
  'GET /api/auth/partner/callback':
    'the connection flow: the provider redirects here, state-checked',
  'POST /api/auth/partner/disconnect': 'the connection flow (partner/oauth): session and CSRF',
  'POST /api/auth/partner/deauthorize': "the provider's signed callback, not a browser's",
  'POST /api/auth/partner/data-deletion': "the provider's signed callback, not a browser's",
};

/** Guarded routes that open without a session, and what they answer a visitor. */
const PUBLIC: Record<string, number> = {
  'GET /login': 200,
  'GET /agent/login': 200,
  'GET /auth-error': 200,
  // An invitation link's page: this "token" is no invitation's.
  'GET /invite/:token': 404,
};
/** Fetched by a page's script: 401 rather than a redirect. */
const FRAGMENTS = new Set([
  'GET /inbox/events',
  'GET /inbox/fragments/list',
  'GET /inbox/:conversationId/fragments/thread',
]);
/** Multipart forms whose token is read from the stream by the handler. */
const STREAMED = new Set(['POST /contacts/import', 'POST /inbox/:conversationId/attach']);

interface Route {
  method: string;
  url: string;
  hooks: Record<string, string[]>;
}

/** The routes of `printRoutes({ commonPrefix: false, includeHooks: true })`, one per method. */
function routesOf(printed: string): Route[] {
  const routes: Route[] = [];
  const pathAt = [''];
  let current: Route[] = [];
  for (const line of printed.split('\n')) {
    const hook = /• \((\w+)\) (\[.*\])$/.exec(line);
    if (hook) {
      for (const r of current) r.hooks[hook[1]!] = JSON.parse(hook[2]!) as string[];
      continue;
    }
    const node = /^((?:│ {3}| {4})*)([├└]── )?(\S+) \(([A-Z, ]+)\)$/.exec(line);
    if (!node) {
      assert.equal(line.trim(), '', `a line of printRoutes not understood: ${line}`);
      continue;
    }
    const [, prefix = '', branch, segment = '', methods = ''] = node;
    let url: string;
    if (branch) {
      const depth = prefix.length / 4 + 1;
      const parent = pathAt[depth - 1]!;
      url = parent + (segment.startsWith('/') || parent.endsWith('/') ? '' : '/') + segment;
      pathAt[depth] = url;
      pathAt.length = depth + 1;
    } else {
      url = pathAt[prefix.length / 4]!;
    }
    current = methods.split(', ').map((method) => ({ method, url, hooks: {} }));
    routes.push(...current);
  }
  return routes;
}

/** The pages' routes (GET and unsafe methods), each with the guard that stands before it. */
async function pageRoutes(app: FastifyInstance) {
  await app.ready();
  return routesOf(app.printRoutes({ commonPrefix: false, includeHooks: true }))
    .filter((r) => r.method !== 'HEAD' && r.hooks.onRequest?.includes('fastifyCookieHandler()'))
    .map((r) => {
      const guards = (r.hooks.preHandler ?? []).filter((h) => /PageGuard\(\)$/.test(h));
      return { key: `${r.method} ${r.url}`, method: r.method, url: r.url, guards };
    });
}

/** The route's path with every parameter given a value its schema takes. */
const concrete = (url: string, id: string) => url.replace(/:[A-Za-z]+/g, id);
const WRONG_TOKEN = 'A'.repeat(43);

async function signedInAgent(
  app: FastifyInstance,
  services: Parameters<typeof portalWithPassword>[0],
) {
  await services.agents.createAgent({
    email: 'lin@operator.test',
    name: 'Lin',
    password: TEST_PASSWORD,
    actor: CLI_ACTOR,
  });
  const agent = new Browser(app);
  const login = await agent.get('/agent/login');
  const res = await agent.post('/agent/login', {
    email: 'lin@operator.test',
    password: TEST_PASSWORD,
    csrf: csrfOf(login.body),
  });
  assert.equal(res.statusCode, 303);
  return agent;
}

for (const backend of backends()) {
  describe(`page areas (${backend.name})`, () => {
    test('every page route stands in a page area, or is named open with its reason', async (t) => {
      const { app } = await buildTestApp(t, backend);
      const routes = await pageRoutes(app);
      const keys = new Set(routes.map((r) => r.key));
      for (const r of routes) {
        if (r.guards.length === 0) {
          assert.ok(
            r.key in OPEN,
            `${r.key} is a page route in no page area (src/web/page-area.ts)`,
          );
        } else {
          assert.equal(
            r.guards.length,
            1,
            `${r.key} stands behind one guard, not ${r.guards.join(', ')}`,
          );
          assert.ok(!(r.key in OPEN), `${r.key} is guarded: take it off the open list`);
        }
      }
      for (const key of [...Object.keys(OPEN), ...Object.keys(PUBLIC), ...FRAGMENTS, ...STREAMED])
        assert.ok(keys.has(key), `${key} is listed here but is no route of the app`);
      assert.ok(routes.filter((r) => r.guards.length > 0).length >= 60, 'the areas are found');
    });

    test('without a session, or with a form token that is not the session’s, every guarded route refuses', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const created = await app.inject({
        method: 'POST',
        url: '/api/v1/external/support/tickets',
        headers: { authorization: portal.token },
        payload: { subject: 'Numbers missing', description: 'Our second number is gone.' },
      });
      assert.equal(created.statusCode, 201, created.body);
      const ticketId = created.json<{ data: { id: string } }>().data.id;
      const user = new Browser(app);
      await user.signIn(portal.email);
      const agent = await signedInAgent(app, services);
      const guarded = (await pageRoutes(app)).filter((r) => r.guards.length > 0);

      for (const r of guarded) {
        const isAgent = r.guards[0] === 'agentPageGuard()';
        const url = concrete(r.url, isAgent ? ticketId : '1');
        const visitor = new Browser(app);
        const res =
          r.method === 'GET'
            ? await visitor.get(url)
            : await visitor.post(url, { csrf: WRONG_TOKEN });
        const signIn = isAgent ? '/agent/login' : '/login';
        if (r.key in PUBLIC) {
          assert.equal(res.statusCode, PUBLIC[r.key], r.key);
        } else if (FRAGMENTS.has(r.key)) {
          assert.equal(res.statusCode, 401, r.key);
          assert.equal(res.body, '', r.key);
        } else if (['POST /login', 'POST /agent/login', 'POST /invite/:token'].includes(r.key)) {
          assert.equal(res.statusCode, 403, `${r.key}: the sign-in form's token is checked`);
        } else {
          const status = r.method === 'GET' || isAgent ? [302, 303] : [303];
          assert.ok(
            status.includes(res.statusCode),
            `${r.key} without a session: ${res.statusCode}`,
          );
          assert.ok(String(res.headers.location).startsWith(signIn), `${r.key} goes to sign-in`);
        }
        if (r.method === 'GET') continue;

        // Signed in, with a token that is not the session's: refused, nothing done.
        const who = isAgent ? agent : user;
        const refused = await who.post(url, { csrf: WRONG_TOKEN });
        if (r.key === 'POST /agent/logout') {
          assert.equal(refused.statusCode, 303, r.key);
          assert.equal((await agent.get('/agent')).statusCode, 200, 'the agent is still signed in');
        } else {
          assert.equal(
            refused.statusCode,
            403,
            `${r.key} with a wrong token: ${refused.statusCode}`,
          );
          assert.match(refused.body, /form (has|had) expired/, r.key);
        }
        if (STREAMED.has(r.key)) {
          const form = new FormData();
          form.set('csrf', WRONG_TOKEN);
          form.set('file', new Blob(['phone\n+33612345678\n']), 'contacts.csv');
          const streamed = await who.postMultipart(url, form);
          // The attach form finds its conversation first (none here: 404); its streamed token
          // is proved in inbox-reply.test.ts.
          const expected = r.key === 'POST /contacts/import' ? 403 : 404;
          assert.equal(streamed.statusCode, expected, `${r.key} as multipart with a wrong token`);
        }
      }
      assert.equal((await user.get('/settings')).statusCode, 200, 'the user is still signed in');
    });
  });
}
