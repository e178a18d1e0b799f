/**
 * Private notes on `/inbox/{conversationId}` over real storage: a member adds a note with the
 * form under the reply box; the thread (page and fragment) shows it with its author's email,
 * marked private; it is sealed at rest, sends no message, and is in no tenant event but its own
 * `conversation.note_added`. A blank note, a too long one and a forged CSRF token are refused
 * (the words beside the field, the text kept) and change nothing; another portal's
 * conversation is a 404.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { loadKeyring } from '../../src/platform/keyring.ts';
import { openEventPayload } from '../../src/webhooks/event-payload.ts';
import { buildTestApp } from '../helpers/app.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword } from '../helpers/web.ts';
import { personWrites } from './inbox-person.ts';

for (const backend of backends()) {
  describe(`/inbox private notes (${backend.name})`, () => {
    test('added from the thread, shown marked private, sealed, in its own event only; bad input refused', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const a = await portalWithPassword(services);
      const b = await portalWithPassword(services);
      const aId = await services.accounts.portalIdFor(a.portalCode);
      const bId = await services.accounts.portalIdFor(b.portalCode);
      const ada = await personWrites(services, aId, {
        phone: '+16505551234',
        firstName: 'Ada',
        text: 'hello from Ada',
      });
      const other = await personWrites(services, bId, { phone: '+16505550000', text: 'hi' });
      const counts = async () =>
        (
          await queryRows<{ notes: number; messages: number; events: number }>(
            services.storage,
            sql`select (select count(*)::int from conversation_notes) as notes,
                  (select count(*)::int from messages) as messages,
                  (select count(*)::int from webhook_events) as events`,
          )
        )[0]!;

      const browser = new Browser(app);
      await browser.signIn(a.email);
      const thread = await browser.get(`/inbox/${ada.conversationId}`);
      assert.equal(thread.statusCode, 200);
      assert.match(thread.body, /data-testid="note-form"[^]*Add a private note/);
      assert.doesNotMatch(thread.body, /data-testid="notes"/, 'no notes yet');
      const csrf = csrfOf(thread.body);
      const before = await counts();

      // Refused: nothing changes.
      const forged = await browser.post(`/inbox/${ada.conversationId}/notes`, {
        csrf: 'x'.repeat(43),
        body: 'forged',
      });
      assert.equal(forged.statusCode, 403);
      const blank = await browser.post(`/inbox/${ada.conversationId}/notes`, { csrf, body: '  ' });
      assert.equal(blank.statusCode, 400);
      assert.match(blank.body, /id="note-body-error"[^>]*>Write the note/);
      const long = await browser.post(`/inbox/${ada.conversationId}/notes`, {
        csrf,
        body: `keep me ${'x'.repeat(4096)}`,
      });
      assert.equal(long.statusCode, 400);
      assert.match(long.body, /id="note-body-error"[^>]*>A note is at most 4096 characters/);
      assert.match(long.body, />keep me x/, 'the text is kept');
      for (const id of [other.conversationId, 'cnv_NoSuchConversation']) {
        const res = await browser.post(`/inbox/${id}/notes`, { csrf, body: 'lost' });
        assert.equal(res.statusCode, 404, id);
      }
      assert.deepEqual(await counts(), before, 'nothing stored, sent or announced');

      // Added.
      const secret = 'Refund 4471 approved\nby phone';
      const added = await browser.post(`/inbox/${ada.conversationId}/notes`, {
        csrf,
        body: secret,
      });
      assert.equal(added.statusCode, 303);
      assert.equal(added.headers.location, `/inbox/${ada.conversationId}#private-notes-title`);
      const after = await counts();
      assert.deepEqual(after, { ...before, notes: before.notes + 1, events: before.events + 1 });

      for (const url of [
        `/inbox/${ada.conversationId}`,
        `/inbox/${ada.conversationId}/fragments/thread`,
      ]) {
        const res = await browser.get(url);
        assert.equal(res.statusCode, 200, url);
        assert.match(res.body, /<h3 id="private-notes-title">Private notes<\/h3>/, url);
        assert.match(
          res.body,
          new RegExp(
            `data-testid="note"[^]*Private note[^]*${a.email}[^]*Refund 4471 approved\\nby phone`,
          ),
          url,
        );
      }
      const otherBrowser = new Browser(app);
      await otherBrowser.signIn(b.email);
      const otherThread = await otherBrowser.get(`/inbox/${other.conversationId}`);
      assert.doesNotMatch(otherThread.body, /4471/, 'another portal never sees it');

      // Sealed at rest; in its own event only, never in a message.
      const dump = await queryRows<{ t: string }>(
        services.storage,
        sql`select coalesce((select json_agg(n)::text from conversation_notes n), '') ||
          coalesce((select json_agg(m)::text from messages m), '') ||
          coalesce((select json_agg(e)::text from webhook_events e), '') as t`,
      );
      assert.ok(!dump[0]!.t.includes('4471'), 'no note in clear');
      const keyring = loadKeyring(services.config);
      const events = await queryRows<{
        id: string;
        type: string;
        payload: Record<string, unknown>;
      }>(
        services.storage,
        sql`select id, type, payload from webhook_events where portal_id = ${aId}`,
      );
      const carrying = events.filter((e) =>
        JSON.stringify(openEventPayload(keyring, aId, e.id, e.payload)).includes('4471'),
      );
      assert.deepEqual(
        carrying.map((e) => e.type),
        ['conversation.note_added'],
      );
    });
  });
}
