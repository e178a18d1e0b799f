/**
 * The "Messaging" section of /settings over real storage: the defaults, a save (stored, audited
 * without the replies' text, a flash), refusals that change nothing (a field's error with what
 * was typed kept; a missing CSRF token; a user who is not the main administrator).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { listAuditEvents } from '../../src/audit/audit-log.ts';
import { messagingSettings as settingsTable } from '../../src/db/schema/conversations.ts';
import { messagingSettings } from '../../src/messaging/conversations/messaging-settings.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';

const REPLY = 'You will get no more messages from us. Reply START to come back.';

/** The form's fields as a browser sends them (an unchecked box is absent). */
function form(csrf: string | undefined, over: Record<string, string | undefined> = {}) {
  return {
    csrf,
    optOutKeywords: 'STOP, stopall\nUNSUBSCRIBE',
    optInKeywords: 'START',
    optOutReply: REPLY,
    optInReply: '',
    autoMarkRead: 'yes',
    ...over,
  };
}

for (const backend of backends()) {
  describe(`/settings "Messaging" (${backend.name})`, () => {
    test('shows the defaults, saves with a flash and an audit row without the reply', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const b = new Browser(app);
      await b.signIn(portal.email);
      const page = await b.get('/settings');
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h2>Messaging<\/h2>/);
      assert.match(
        page.body,
        /name="optOutKeywords"[^>]*value="STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT"/,
      );
      assert.match(page.body, /name="optInKeywords"[^>]*value="START, UNSTOP"/);
      assert.doesNotMatch(page.body, /name="autoMarkRead"[^>]*checked/);

      const res = await b.post('/settings/messaging', form(csrfOf(page.body)));
      assert.equal(res.statusCode, 303, res.body);
      assert.equal(res.headers.location, '/settings?done=messaging_saved#messaging');
      assert.deepEqual(await messagingSettings(services.storage.db, portal.portalId), {
        optOutKeywords: ['STOP', 'STOPALL', 'UNSUBSCRIBE'],
        optInKeywords: ['START'],
        optOutReply: REPLY,
        optInReply: null,
        autoMarkRead: true,
      });
      const shown = await b.get('/settings?done=messaging_saved');
      assert.match(shown.body, /The messaging settings are saved/);
      assert.match(shown.body, /name="optOutKeywords"[^>]*value="STOP, STOPALL, UNSUBSCRIBE"/);
      assert.match(shown.body, /name="autoMarkRead"[^>]*checked/);
      assert.match(shown.body, /Messaging settings changed/);

      const [event] = await listAuditEvents(services.storage.db, portal.portalId);
      assert.equal(event!.action, 'messaging_settings.changed');
      assert.deepEqual([event!.actorType, event!.actorId], ['user', String(portal.userId)]);
      assert.equal(
        event!.reason,
        'changed: opt-out keywords, opt-in keywords, opt-out confirmation reply, mark read on open',
      );
      assert.ok(!JSON.stringify(event).includes('no more messages'), 'no reply text audited');

      // The same form again changes nothing and writes no second audit row.
      const again = await b.post('/settings/messaging', form(csrfOf(shown.body)));
      assert.equal(again.statusCode, 303);
      const events = await listAuditEvents(services.storage.db, portal.portalId);
      assert.equal(events.filter((e) => e.action === 'messaging_settings.changed').length, 1);

      // Unchecking the box turns it off.
      const off = await b.post(
        '/settings/messaging',
        form(csrfOf(shown.body), { autoMarkRead: undefined }),
      );
      assert.equal(off.statusCode, 303);
      assert.equal(
        (await messagingSettings(services.storage.db, portal.portalId)).autoMarkRead,
        false,
      );
    });

    test('bad input: the error beside its field, what was typed kept, nothing stored', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const b = new Browser(app);
      await b.signIn(portal.email);
      const page = await b.get('/settings');
      const cases: [Record<string, string>, string, RegExp][] = [
        [
          { optInKeywords: 'START, stop' },
          'optInKeywords',
          /STOP cannot be an opt-out and an opt-in keyword at once/,
        ],
        [{ optOutKeywords: 'X'.repeat(31) }, 'optOutKeywords', /at most 30 characters/],
        [{ optOutReply: 'y'.repeat(1025) }, 'optOutReply', /At most 1024 characters/],
      ];
      for (const [over, field, message] of cases) {
        const res = await b.post('/settings/messaging', form(csrfOf(page.body), over));
        assert.equal(res.statusCode, 400, field);
        const error = new RegExp(
          `id="f-${field}"[^>]*aria-invalid="true"|aria-invalid="true"[^>]*id="f-${field}"`,
        );
        assert.match(res.body, error, `${field} is marked invalid`);
        assert.match(res.body, new RegExp(`<p class="field-error" id="f-${field}-error">[^<]*`));
        assert.match(res.body, message);
        const typed = Object.values(over)[0]!;
        assert.ok(
          res.body.includes(field === 'optOutReply' ? `>${typed}</textarea>` : `value="${typed}"`),
          'kept',
        );
        // The other fields keep what was typed too.
        assert.ok(res.body.includes(REPLY) || field === 'optOutReply');
      }
      assert.equal((await services.storage.db.select().from(settingsTable)).length, 0);
      const events = await listAuditEvents(services.storage.db, portal.portalId);
      assert.ok(!events.some((e) => e.action === 'messaging_settings.changed'));
    });

    test('without the CSRF token, or by a user who is not the main administrator: refused', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const b = new Browser(app);
      await b.signIn(portal.email);
      for (const csrf of [undefined, '', 'x'.repeat(43)]) {
        const res = await b.post('/settings/messaging', form(csrf));
        assert.equal(res.statusCode, 403);
        assert.match(res.body, /Nothing was changed/);
      }
      const member = 'member@example.test';
      await services.accounts.createUser({
        portalCode: portal.portalCode,
        email: member,
        mainAdmin: false,
      });
      await services.accounts.setPassword({
        portalCode: portal.portalCode,
        email: member,
        password: TEST_PASSWORD,
      });
      const m = new Browser(app);
      await m.signIn(member);
      const page = await m.get('/settings');
      assert.equal(page.statusCode, 200);
      assert.doesNotMatch(page.body, /action="\/settings\/messaging"/);
      assert.match(page.body, /Only an administrator can change the messaging settings/);
      assert.match(page.body, /STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT/);
      const res = await m.post('/settings/messaging', form(csrfOf(page.body)));
      assert.equal(res.statusCode, 403);
      assert.equal((await services.storage.db.select().from(settingsTable)).length, 0);
      // Signed out: to the sign-in page, nothing stored.
      const anonymous = await new Browser(app).post('/settings/messaging', form('x'));
      assert.equal(anonymous.statusCode, 303);
      assert.match(String(anonymous.headers.location), /^\/login/);
      assert.equal((await services.storage.db.select().from(settingsTable)).length, 0);
    });
  });
}
