import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword } from '../helpers/web.ts';

const CSV = 'phone,firstName\n+1 650 555 1234,Ada\n+44 20 7946 0958,Bob\n';

for (const backend of backends()) {
  describe(`/contacts page (${backend.name})`, () => {
    test('the CSV upload (multipart) without its CSRF token, or with a forged one, is refused', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const a = await portalWithPassword(services);
      const browser = new Browser(app);
      await browser.signIn(a.email);
      const list = await browser.get('/contacts');
      const upload = async (csrf: string | undefined) => {
        const form = new FormData();
        if (csrf !== undefined) form.set('csrf', csrf);
        form.set('file', new Blob([CSV], { type: 'text/csv' }), 'people.csv');
        const request = new Request('http://localhost/contacts/import', {
          method: 'POST',
          body: form,
        });
        return app.inject({
          method: 'POST',
          url: '/contacts/import',
          payload: Buffer.from(await request.arrayBuffer()),
          headers: {
            'content-type': request.headers.get('content-type')!,
            cookie: [...browser.jar].map(([k, v]) => `${k}=${v}`).join('; '),
          },
        });
      };
      for (const csrf of [undefined, 'forged']) {
        const refused = await upload(csrf);
        assert.equal(refused.statusCode, 403, `csrf ${String(csrf)}`);
        assert.doesNotMatch(refused.body, /Ada|people\.csv/);
      }
      const preview = await upload(csrfOf(list.body));
      assert.equal(preview.statusCode, 200);
      assert.match(preview.body, /people\.csv/);
    });

    test('needs a session; forms need the CSRF token; another portal’s contact is not found', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const a = await portalWithPassword(services);
      const b = await portalWithPassword(services);
      const anonymous = new Browser(app);
      const redirected = await anonymous.get('/contacts');
      assert.equal(redirected.statusCode, 302);
      assert.equal(redirected.headers.location, '/login?next=%2Fcontacts');

      const browser = new Browser(app);
      await browser.signIn(a.email);
      const list = await browser.get('/contacts');
      assert.equal(list.statusCode, 200);
      assert.match(list.body, /No contacts yet/);

      // The confirmation without (or with a wrong) CSRF token writes nothing.
      for (const csrf of [undefined, 'forged']) {
        const res = await browser.post('/contacts/import/confirm', { csv: CSV, csrf });
        assert.equal(res.statusCode, 403);
      }
      const none = await services.contacts.listContacts({ portalId: a.portalId }, { limit: 10 });
      assert.deepEqual(none.items, []);

      const done = await browser.post('/contacts/import/confirm', {
        csv: CSV,
        csrf: csrfOf(list.body),
      });
      assert.equal(done.statusCode, 303);
      const notice = await browser.get(done.headers.location as string);
      assert.match(notice.body, /Imported: 2 created/);
      const page = await browser.get('/contacts?q=ada');
      assert.match(page.body, /\+16505551234/);
      assert.doesNotMatch(page.body, /\+442079460958/);

      const other = new Browser(app);
      await other.signIn(b.email);
      const ada = (
        await services.contacts.listContacts({ portalId: a.portalId }, { limit: 10, q: 'ada' })
      ).items[0]!;
      assert.equal((await other.get(`/contacts/${ada.id}/delete`)).statusCode, 404);
      const otherPage = await other.get('/contacts');
      const erase = await other.post(`/contacts/${ada.id}/delete`, {
        csrf: csrfOf(otherPage.body),
        confirm: 'yes',
      });
      assert.equal(erase.statusCode, 404);
      assert.equal(
        (await services.contacts.getContact({ portalId: a.portalId }, ada.id)).id,
        ada.id,
      );

      const noCsrf = await browser.post(`/contacts/${ada.id}/delete`, {});
      assert.equal(noCsrf.statusCode, 403);
      const confirm = await browser.get(`/contacts/${ada.id}/delete`);
      assert.match(confirm.body, /Delete this contact\?/);
      // Without the confirmation step's `confirm=yes`, the form goes back to that step.
      const unconfirmed = await browser.post(`/contacts/${ada.id}/delete`, {
        csrf: csrfOf(confirm.body),
      });
      assert.equal(unconfirmed.statusCode, 303);
      assert.equal(unconfirmed.headers.location, `/contacts/${ada.id}/delete`);
      assert.equal(
        (await services.contacts.getContact({ portalId: a.portalId }, ada.id)).id,
        ada.id,
      );
      const erased = await browser.post(`/contacts/${ada.id}/delete`, {
        csrf: csrfOf(confirm.body),
        confirm: 'yes',
      });
      assert.equal(erased.statusCode, 303);
      assert.match(
        (await browser.get(erased.headers.location as string)).body,
        /contact is erased/,
      );
      // `?done=` shows only words of the fixed vocabulary, never text from the URL.
      const crafted = await browser.get('/contacts?done=Your%20account%20is%20suspended');
      assert.doesNotMatch(crafted.body, /suspended/);
      await assert.rejects(
        services.contacts.getContact({ portalId: a.portalId }, ada.id),
        /No contact/,
      );
    });
  });
}
