/**
 * Every page form that deletes or revokes goes through the kit's confirmation step: the route
 * table's POST routes whose path deletes, removes, disconnects, revokes or regenerates are
 * found, and each, posted with a valid CSRF token but without `confirm=yes`, changes nothing
 * and sends the person to its confirmation page (which carries the confirm button).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword } from '../helpers/web.ts';

/** Page forms (not the JSON API) whose path says they delete or revoke. */
const DESTRUCTIVE = /\/(delete|remove|disconnect|revoke[^/]*)$|^\/settings\/token$/;

/** Every POST route's full path, from Fastify's printed route tree. */
function postRoutes(app: FastifyInstance): string[] {
  const lines = app.printRoutes({ commonPrefix: false }).split('\n');
  const stack: string[] = [];
  const found: string[] = [];
  for (const line of lines) {
    const m = /^([│ ]*)(?:[├└]── )?(\S+)(?: \(([^)]*)\))?/.exec(line.replace(/\s+$/, ''));
    if (!m || !m[2]) continue;
    const depth = Math.floor((m[1] ?? '').length / 4);
    stack.length = depth;
    stack[depth] = m[2];
    if (m[3]?.split(', ').includes('POST')) found.push(stack.join(''));
  }
  return found;
}

for (const backend of backends()) {
  describe(`destructive page forms (${backend.name})`, () => {
    test('each needs the confirmation step', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const admin = await portalWithPassword(services);
      const browser = new Browser(app);
      await browser.signIn(admin.email);
      const routes = postRoutes(app).filter(
        (r) => DESTRUCTIVE.test(r) && !r.startsWith('/crm') && !r.startsWith('/messaging'),
      );
      for (const expected of [
        '/contacts/:id/delete',
        '/settings/webhooks/:id/remove',
        '/settings/keys/:id/revoke',
        '/settings/token',
        '/api/auth/partner/disconnect',
      ])
        assert.ok(routes.includes(expected), `${expected} is found in ${routes.join(', ')}`);
      for (const route of routes) {
        const page = await browser.get('/settings');
        const path = route.replace(':id', 'whatever');
        const res = await browser.post(path, { csrf: csrfOf(page.body) });
        assert.equal(res.statusCode, 303, `${route} unconfirmed`);
        const location = res.headers.location as string;
        assert.doesNotMatch(location, /done=/, `${route} did nothing`);
        if (!route.includes(':id')) {
          const confirm = await browser.get(location);
          assert.match(confirm.body, /data-testid="confirm"/, `${route} → ${location}`);
        } else assert.equal(location, path, `${route} goes back to its confirmation page`);
      }
    });
  });
}
