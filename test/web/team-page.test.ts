/**
 * The team of a portal, in process on each storage: an administrator invites from
 * `/settings/team`, the one-time link sets a password and signs the member in; an agent is
 * refused the administrators' pages (403) but works the inbox and contacts; disabling or
 * removing a member ends their sessions at once; the last active administrator stays one; bad
 * input (an unknown role, a taken email, an expired or used link, a forged form) changes nothing;
 * every change is audited, and the link's token never reaches the log or the audit log.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { TeamService, INVITATION_LIFETIME_MS } from '../../src/accounts/team-service.ts';
import { listAuditEvents } from '../../src/audit/audit-log.ts';
import { users } from '../../src/db/schema/index.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword } from '../helpers/web.ts';

const NEW_PASSWORD = 'a long enough passphrase';

/** The one-time link shown once on the team page after an invitation. */
function linkOf(html: string): string {
  const m = /value="(http:\/\/[^"]+\/invite\/[A-Za-z0-9_-]{43})"/.exec(html);
  assert.ok(m, 'the invitation link is shown');
  return m[1]!;
}

for (const backend of backends()) {
  describe(`/settings/team (${backend.name})`, () => {
    test('invite an agent, accept the link, the agent works the inbox but not the settings; disable ends the session', async (t) => {
      const { app, services, logs } = await buildTestApp(t, backend);
      const admin = await portalWithPassword(services);
      const browser = new Browser(app);
      await browser.signIn(admin.email);
      const page = await browser.get('/settings/team');
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /Invite a member/);
      const csrf = csrfOf(page.body);

      const email = `agent-${Math.random().toString(36).slice(2)}@example.test`;
      const invited = await browser.post('/settings/team/invite', { csrf, email, role: 'agent' });
      assert.equal(invited.statusCode, 303);
      assert.equal(invited.headers.location, '/settings/team?done=member_invited');
      const shown = await browser.get('/settings/team?done=member_invited');
      const link = linkOf(shown.body);
      const path = new URL(link).pathname;
      const token = path.split('/').pop()!;
      assert.doesNotMatch(
        (await browser.get('/settings/team?done=member_invited')).body,
        /\/invite\//,
        'shown once',
      );
      const members = await services.team.listMembers(admin.portalId);
      assert.deepEqual(
        members.map((m) => [m.email, m.role, m.status]),
        [
          [admin.email, 'admin', 'active'],
          [email, 'agent', 'invited'],
        ],
      );

      // The link: the form, then a password, then signed in as the agent.
      const agent = new Browser(app);
      const form = await agent.get(path);
      assert.equal(form.statusCode, 200);
      assert.equal(form.headers['referrer-policy'], 'no-referrer');
      assert.match(form.body, /invited as an agent/);
      const mismatch = await agent.post(path, {
        csrf: csrfOf(form.body),
        password: NEW_PASSWORD,
        password2: 'something else entirely',
      });
      assert.equal(mismatch.statusCode, 400);
      const short = await agent.post(path, {
        csrf: csrfOf(form.body),
        password: 'short',
        password2: 'short',
      });
      assert.equal(short.statusCode, 400);
      assert.match(short.body, /at least 12/);
      const forged = await agent.post(path, {
        csrf: 'forged',
        password: NEW_PASSWORD,
        password2: NEW_PASSWORD,
      });
      assert.equal(forged.statusCode, 403);
      const accepted = await agent.post(path, {
        csrf: csrfOf(form.body),
        password: NEW_PASSWORD,
        password2: NEW_PASSWORD,
      });
      assert.equal(accepted.statusCode, 303, accepted.body);
      assert.equal(accepted.headers.location, '/inbox');

      // Signed in as an agent: the inbox and contacts, not the administrators' pages.
      assert.equal((await agent.get('/inbox')).statusCode, 200);
      assert.equal((await agent.get('/contacts')).statusCode, 200);
      for (const url of ['/settings/webhooks', '/settings/keys']) {
        const refused = await agent.get(url);
        assert.equal(refused.statusCode, 403, url);
        assert.match(refused.body, /Only an administrator/);
      }
      const settings = await agent.get('/settings');
      assert.match(settings.body, /, agent\)/);
      assert.doesNotMatch(settings.body, /data-testid="regenerate"/);
      const teamPage = await agent.get('/settings/team');
      assert.equal(teamPage.statusCode, 200);
      assert.doesNotMatch(teamPage.body, /Invite a member/);
      const agentCsrf = csrfOf(teamPage.body);
      const agentInvite = await agent.post('/settings/team/invite', {
        csrf: agentCsrf,
        email: 'x@example.test',
        role: 'admin',
      });
      assert.equal(agentInvite.statusCode, 403);
      assert.equal((await agent.get(`/settings/team/${admin.userId}/disable`)).statusCode, 403);
      const agentDisable = await agent.post(`/settings/team/${admin.userId}/disable`, {
        csrf: agentCsrf,
        confirm: 'yes',
      });
      assert.equal(agentDisable.statusCode, 403);
      const regenerate = await agent.post('/settings/token', { csrf: agentCsrf, confirm: 'yes' });
      assert.equal(regenerate.statusCode, 403);
      // Their own availability is theirs to set.
      const away = await agent.post('/settings/team/availability', {
        csrf: agentCsrf,
        availability: 'away',
      });
      assert.equal(away.statusCode, 303);
      assert.match((await agent.get('/settings/team')).body, /data-testid="my-availability">away/);
      const badAvailability = await agent.post('/settings/team/availability', {
        csrf: agentCsrf,
        availability: 'asleep',
      });
      assert.equal(badAvailability.statusCode, 400);

      // The link worked once.
      const again = await new Browser(app).get(path);
      assert.equal(again.statusCode, 404);
      assert.match(again.body, /does not work/);

      // Disable (after its confirmation step): the agent's next request is signed out.
      const agentId = (await services.team.listMembers(admin.portalId)).find(
        (m) => m.email === email,
      )!.userId;
      const confirm = await browser.get(`/settings/team/${agentId}/disable`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /signed out at once/);
      const unconfirmed = await browser.post(`/settings/team/${agentId}/disable`, { csrf });
      assert.equal(unconfirmed.statusCode, 303);
      assert.equal((await agent.get('/inbox')).statusCode, 200, 'not yet disabled');
      const disabled = await browser.post(`/settings/team/${agentId}/disable`, {
        csrf,
        confirm: 'yes',
      });
      assert.equal(disabled.statusCode, 303);
      const out = await agent.get('/inbox');
      assert.equal(out.statusCode, 302);
      assert.match(String(out.headers.location), /^\/login/);
      // …and cannot sign in again.
      const login = await new Browser(app).get('/login');
      const refusedLogin = await new Browser(app).post('/login', {
        email,
        password: NEW_PASSWORD,
        csrf: csrfOf(login.body),
      });
      assert.notEqual(refusedLogin.statusCode, 303);

      const actions = (await listAuditEvents(services.storage.db, admin.portalId)).map(
        (e) => e.action,
      );
      for (const a of ['member.invited', 'member.joined', 'member.disabled'])
        assert.ok(actions.includes(a), a);
      const audit = JSON.stringify(await listAuditEvents(services.storage.db, admin.portalId));
      assert.ok(!audit.includes(token), 'the token is in no audit row');
      assert.ok(!logs.join('\n').includes(token), 'the token is in no log line');
    });

    test('bad input changes nothing: unknown role, taken email, expired and unknown links; the last admin stays', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const admin = await portalWithPassword(services);
      const other = await portalWithPassword(services);
      const browser = new Browser(app);
      await browser.signIn(admin.email);
      const csrf = csrfOf((await browser.get('/settings/team')).body);

      const unknownRole = await browser.post('/settings/team/invite', {
        csrf,
        email: 'someone@example.test',
        role: 'owner',
      });
      assert.equal(unknownRole.statusCode, 400);
      assert.match(unknownRole.body, /Choose a role: admin or agent/);
      assert.match(unknownRole.body, /someone@example\.test/, 'what was typed is kept');
      for (const email of [admin.email, other.email, 'not an email']) {
        const res = await browser.post('/settings/team/invite', { csrf, email, role: 'agent' });
        assert.equal(res.statusCode, 400, email);
      }
      assert.equal((await services.team.listMembers(admin.portalId)).length, 1);

      // The only admin cannot demote, disable or remove themselves.
      for (const [url, form] of [
        [`/settings/team/${admin.userId}/role`, { csrf, role: 'agent' }],
        [`/settings/team/${admin.userId}/disable`, { csrf, confirm: 'yes' }],
        [`/settings/team/${admin.userId}/remove`, { csrf, confirm: 'yes' }],
      ] as const) {
        const res = await browser.post(url, form);
        assert.equal(res.statusCode, 400, url);
        assert.match(res.body, /last active administrator/);
      }
      // Another portal's member is not found, and stays.
      const foreign = await browser.post(`/settings/team/${other.userId}/remove`, {
        csrf,
        confirm: 'yes',
      });
      assert.equal(foreign.statusCode, 404);
      assert.equal((await services.team.listMembers(other.portalId)).length, 1);

      // An expired link says so (410) and sets nothing.
      let now = Date.now();
      const clocked = new TeamService({ db: services.storage.db, now: () => now });
      const made = await clocked.invite({
        portalId: admin.portalId,
        email: 'late@example.test',
        role: 'admin',
        actor: { type: 'system', id: 'test' },
      });
      now += INVITATION_LIFETIME_MS + 1000;
      assert.deepEqual(await clocked.invitation(made.token), { state: 'expired' });
      assert.deepEqual(
        await clocked.acceptInvitation({ token: made.token, password: NEW_PASSWORD }),
        { outcome: 'expired' },
      );
      const [row] = await services.storage.db
        .select({ passwordHash: users.passwordHash })
        .from(users)
        .where(eq(users.id, made.userId));
      assert.equal(row!.passwordHash, null);
      // Through the pages with the real clock, an unknown link is a 404 page.
      const visitor = new Browser(app);
      assert.equal((await visitor.get(`/invite/${'x'.repeat(43)}`)).statusCode, 404);
      assert.equal((await visitor.get('/invite/short')).statusCode, 404);

      // With a second active admin, the first can be made an agent and back.
      const second = await services.team.invite({
        portalId: admin.portalId,
        email: 'second@example.test',
        role: 'admin',
        actor: { type: 'system', id: 'test' },
      });
      assert.equal(
        (await services.team.acceptInvitation({ token: second.token, password: NEW_PASSWORD }))
          .outcome,
        'accepted',
      );
      const demote = await browser.post(`/settings/team/${second.userId}/role`, {
        csrf,
        role: 'agent',
      });
      assert.equal(demote.statusCode, 303);
      // The main administrator is never disabled, even with another admin.
      await services.team.setRole({
        portalId: admin.portalId,
        userId: second.userId,
        role: 'admin',
        actor: { type: 'system', id: 'test' },
      });
      await assert.rejects(
        services.team.disable({
          portalId: admin.portalId,
          userId: admin.userId,
          actor: { type: 'system', id: 'test' },
        }),
        /main administrator/,
      );
      const removed = await browser.post(`/settings/team/${second.userId}/remove`, {
        csrf,
        confirm: 'yes',
      });
      assert.equal(removed.statusCode, 303);
      assert.deepEqual(
        (await services.team.listMembers(admin.portalId)).map((m) => m.email),
        [admin.email, 'late@example.test'],
      );
    });
  });
}
