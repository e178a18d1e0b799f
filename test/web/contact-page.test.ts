/**
 * `/contacts/{id}` through `app.inject` on both backends: the page shows what the contacts
 * service stores (fields, the CSV's extra columns as attributes, tags, consent and its history,
 * identifiers) and the support tickets that name the person; its forms edit the fields and the
 * attributes as `PATCH /crm/contacts/{id}` does, and bad input comes back with its error next to
 * the field and changes nothing; an unknown or another portal's id is the 404 page; every form
 * needs the session's CSRF token; the person's data reaches no log line and no redirect.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword } from '../helpers/web.ts';

const CSV =
  'phone,firstName,lastName,email,tags,plan,seats\n' +
  '+1 650 555 1234,Ada,Lovelace,ada@example.test,vip;beta,pro,5\n' +
  '+44 20 7946 0958,Bob,Builder,,,,\n';

for (const backend of backends()) {
  describe(`/contacts/{id} (${backend.name})`, () => {
    test('shows the contact; edits fields and attributes; bad input changes nothing', async (t) => {
      const { app, services, logs } = await buildTestApp(t, backend);
      const a = await portalWithPassword(services);
      const browser = new Browser(app);
      await browser.signIn(a.email);
      const list = await browser.get('/contacts');
      const imported = await browser.post('/contacts/import/confirm', {
        csv: CSV,
        csrf: csrfOf(list.body),
      });
      assert.equal(imported.statusCode, 303);
      const all = await services.contacts.listContacts(a, { limit: 10 });
      const ada = all.items.find((c) => c.firstName === 'Ada')!;
      const bob = all.items.find((c) => c.firstName === 'Bob')!;
      await services.contacts.patchContact(a, ada.id, { consent: { whatsapp: 'opted_in' } });
      const ticket = await app.inject({
        method: 'POST',
        url: '/api/v1/external/support/tickets',
        headers: { authorization: a.token },
        payload: { subject: 'Ada Lovelace cannot log in', description: 'See +16505551234.' },
      });
      assert.equal(ticket.statusCode, 201, ticket.body);

      // The list links each row to its page.
      const listed = await browser.get('/contacts');
      assert.match(listed.body, new RegExp(`href="/contacts/${ada.id}"`));

      const page = await browser.get(`/contacts/${ada.id}`);
      assert.equal(page.statusCode, 200);
      for (const shown of [
        'Ada Lovelace',
        'value="ada@example.test"',
        'value="vip, beta"',
        '>plan<',
        'value="pro"',
        '>seats<',
        'value="5"',
        '+16505551234',
        'opted in',
        'unknown → opted in',
        'No conversation yet.',
        'Ada Lovelace cannot log in',
        'Connect your WhatsApp Business account',
        `href="/contacts/${ada.id}/delete"`,
      ])
        assert.ok(page.body.includes(shown), `the page shows ${shown}`);
      const csrf = csrfOf(page.body);

      // Bad input: the error beside its field, what was typed kept, nothing changed.
      const details = {
        csrf,
        firstName: 'Ada',
        lastName: 'King',
        phone: '+16505551234',
        email: 'not-an-email',
        tags: 'vip, beta',
      };
      const refused = await browser.post(`/contacts/${ada.id}`, details);
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /The email must be an email address\./);
      assert.match(refused.body, /value="not-an-email"/);
      assert.match(refused.body, /value="King"/);
      const taken = await browser.post(`/contacts/${ada.id}`, {
        ...details,
        email: 'ada@example.test',
        phone: bob.phone!,
      });
      assert.equal(taken.statusCode, 409);
      assert.match(taken.body, /Another contact has this phone\./);
      const cleared = await browser.post(`/contacts/${ada.id}`, { ...details, phone: ' ' });
      assert.equal(cleared.statusCode, 400);
      assert.match(cleared.body, /The phone cannot be removed/);
      const unchanged = await services.contacts.getContact(a, ada.id);
      assert.equal(unchanged.lastName, 'Lovelace');
      assert.equal(unchanged.email, 'ada@example.test');
      assert.equal(unchanged.phone, '+16505551234');

      const saved = await browser.post(`/contacts/${ada.id}`, {
        ...details,
        email: '',
        tags: 'vip, churn-risk',
      });
      assert.equal(saved.statusCode, 303);
      assert.equal(saved.headers.location, `/contacts/${ada.id}?done=contact_saved#details`);
      const after = await services.contacts.getContact(a, ada.id);
      assert.equal(after.lastName, 'King');
      assert.equal(after.email, null);
      assert.deepEqual(after.tags, ['vip', 'churn-risk']);
      assert.match((await browser.get(saved.headers.location)).body, /The details are saved\./);

      // Attributes: a bad new name or a control character is refused, nothing changes.
      const badKey = await browser.post(`/contacts/${ada.id}/attributes`, {
        csrf,
        key: ['plan', 'seats', '1st'],
        value: ['enterprise', '5', 'x'],
      });
      assert.equal(badKey.statusCode, 400);
      assert.match(badKey.body, /A name starts with a letter/);
      assert.match(badKey.body, /value="enterprise"/);
      const badValue = await browser.post(`/contacts/${ada.id}/attributes`, {
        csrf,
        key: ['plan', 'seats', ''],
        value: ['a\u0007b', '5', ''],
      });
      assert.equal(badValue.statusCode, 400);
      assert.match(badValue.body, /This value must not contain control characters\./);
      assert.deepEqual((await services.contacts.getContact(a, ada.id)).attributes, {
        plan: 'pro',
        seats: '5',
      });
      // Change one, remove one (emptied), add one.
      const attrs = await browser.post(`/contacts/${ada.id}/attributes`, {
        csrf,
        key: ['plan', 'seats', 'region'],
        value: ['enterprise', '', 'EMEA'],
      });
      assert.equal(attrs.statusCode, 303);
      assert.deepEqual((await services.contacts.getContact(a, ada.id)).attributes, {
        plan: 'enterprise',
        region: 'EMEA',
      });

      // Nothing of the person in a log line or a redirect.
      const seen = [...logs, ...browser.responses.map((r) => String(r.headers.location ?? ''))];
      for (const secret of ['ada@example.test', '16505551234', 'Lovelace', 'enterprise', 'EMEA'])
        assert.ok(!seen.some((l) => l.includes(secret)), `${secret} stays out of logs and URLs`);
    });

    test('an unknown or another portal’s contact is the 404 page; forms need the CSRF token', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const a = await portalWithPassword(services);
      const b = await portalWithPassword(services);
      const { body } = await services.contacts.createContact({
        principal: a,
        input: { phone: '+16505551234', firstName: 'Ada', attributes: { plan: 'pro' } },
      });
      const id = body.data.id;
      const other = new Browser(app);
      await other.signIn(b.email);
      const otherCsrf = csrfOf((await other.get('/contacts')).body);
      for (const url of [`/contacts/${id}`, '/contacts/ctc_unknown', '/contacts/x%20y'])
        assert.equal((await other.get(url)).statusCode, 404, url);
      const notFound = await other.get(`/contacts/${id}`);
      assert.match(notFound.body, /No such contact/);
      assert.doesNotMatch(notFound.body, /Ada|6505551234/);
      for (const [url, form] of [
        [`/contacts/${id}`, { firstName: 'Eve', phone: '+16505551234' }],
        [`/contacts/${id}/attributes`, { key: 'plan', value: 'free' }],
        [`/contacts/${id}/send`, { compose: 'x' }],
      ] as const) {
        const res = await other.post(url, { ...form, csrf: otherCsrf });
        assert.equal(res.statusCode, 404, url);
      }

      const owner = new Browser(app);
      await owner.signIn(a.email);
      await owner.get(`/contacts/${id}`);
      for (const csrf of [undefined, 'forged']) {
        const res = await owner.post(`/contacts/${id}`, { firstName: 'Eve', csrf });
        assert.equal(res.statusCode, 403);
        const attrs = await owner.post(`/contacts/${id}/attributes`, {
          key: 'plan',
          value: 'free',
          csrf,
        });
        assert.equal(attrs.statusCode, 403);
      }
      const kept = await services.contacts.getContact(a, id);
      assert.equal(kept.firstName, 'Ada');
      assert.deepEqual(kept.attributes, { plan: 'pro' });
    });
  });
}
