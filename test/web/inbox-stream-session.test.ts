/**
 * The inbox's event stream lives no longer than its session: signing out, or the session
 * expiring, ends an open `/inbox/events` stream at its next session check (every
 * `HEARTBEAT_MS`); a stream whose session is still valid stays open.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { HEARTBEAT_MS } from '../../src/web/inbox/inbox-stream-routes.tsx';
import { buildTestApp } from '../helpers/app.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword } from '../helpers/web.ts';

/** An open stream: `ready` resolves once its first event came, `ended` when the server ends it. */
function openStream(url: string, cookie: string) {
  let ready!: () => void;
  const readyP = new Promise<void>((resolve) => (ready = resolve));
  let endedAt: number | undefined;
  const req = request(url, { headers: { cookie, accept: 'text/event-stream' } }, (res) => {
    assert.equal(res.statusCode, 200);
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (chunk.includes('event: ready')) ready();
    });
    res.on('end', () => (endedAt = Date.now()));
  });
  req.on('error', () => undefined);
  req.end();
  return { ready: readyP, ended: () => endedAt !== undefined, close: () => req.destroy() };
}

const cookieOf = (b: Browser) => [...b.jar].map(([k, v]) => `${k}=${v}`).join('; ');

for (const backend of backends()) {
  describe(`/inbox/events and the session (${backend.name})`, () => {
    test('signing out or the session expiring ends the stream; a live session keeps it', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const base = await app.listen({ host: '127.0.0.1', port: 0 });
      const [out, expired, live] = [new Browser(app), new Browser(app), new Browser(app)];
      for (const b of [out, expired, live]) await b.signIn(portal.email);
      const streams = [out, expired, live].map((b) =>
        openStream(`${base}/inbox/events`, cookieOf(b)),
      );
      t.after(() => streams.forEach((s) => s.close()));
      await Promise.all(streams.map((s) => s.ready));

      const csrf = csrfOf((await out.get('/settings')).body);
      assert.equal((await out.post('/logout', { csrf })).statusCode, 303);
      // The second browser's session (the first left was signed out) runs out.
      await queryRows(
        services.storage,
        sql`update sessions set expires_at = now() - interval '1 second'
            where id_hash = (select id_hash from sessions where user_id = ${portal.userId}
                             order by created_at limit 1)`,
      );

      // Both end at the next session check; generous: one heartbeat plus 15 s on a busy machine.
      const deadline = Date.now() + HEARTBEAT_MS + 15_000;
      while (!(streams[0]!.ended() && streams[1]!.ended()) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      assert.ok(streams[0]!.ended(), 'the signed-out session’s stream ended');
      assert.ok(streams[1]!.ended(), 'the expired session’s stream ended');
      assert.equal(streams[2]!.ended(), false, 'the live session’s stream is still open');
    });
  });
}
