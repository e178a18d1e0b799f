/**
 * Erasing a contact (GDPR art. 17) strips the person from the portal's support tickets: after
 * `DELETE /crm/contacts/{id}` no ticket subject or description, public comment or agent's
 * internal note holds their phone, email or names, while the rest of each text stays; another
 * portal's ticket naming the same words is untouched (docs/support.md, src/tickets/ticket-erasure.ts).
 * Before it, `ticketsNaming` (a contact's page) lists the tickets the erasure will rewrite.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

const TICKETS = '/api/v1/external/support/tickets';
const CONTACTS = '/api/v1/external/crm/contacts';
const PERSON = {
  phone: '+16505557321',
  email: 'zenobia.q@example.test',
  firstName: 'Zenobia',
  lastName: 'Quixotic',
};
/** Each way the person appears in the texts below. */
const NEEDLES = ['16505557321', 'zenobia.q@example.test', 'Zenobia', 'Quixotic'];

for (const backend of backends()) {
  describe(`support tickets after a contact's erasure (${backend.name})`, () => {
    test('tickets, comments and internal notes lose the phone, email and names; nothing else', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const [mine, theirs] = await Promise.all([createPortal(services), createPortal(services)]);
      const call = (token: string, method: 'POST' | 'DELETE', url: string, payload?: object) =>
        app.inject({
          method,
          url,
          headers: { authorization: token },
          ...(payload && { payload }),
        });
      const text = {
        subject: 'Zenobia Quixotic cannot log in',
        description: `Customer zenobia.q@example.test (${PERSON.phone}) reports a lockout.`,
      };
      const ticketIds: string[] = [];
      for (const token of [mine.token, theirs.token]) {
        const res = await call(token, 'POST', TICKETS, text);
        assert.equal(res.statusCode, 201, res.body);
        ticketIds.push(res.json().data.id as string);
      }
      const [id, otherId] = ticketIds as [string, string];
      const comment = await call(mine.token, 'POST', `${TICKETS}/${id}/comments`, {
        body: 'Zenobia called again from 16505557321, then from +1 650-555-7321.',
      });
      assert.equal(comment.statusCode, 201, comment.body);
      const agent = await services.agents.createAgent({
        email: 'grace@operator.test',
        name: 'Grace',
        password: 'correct horse battery staple',
        actor: CLI_ACTOR,
      });
      await services.desk.note({
        agentId: agent.agentId,
        ticketId: id,
        body: 'Checked the account of QUIXOTIC, zenobia.q@example.test, (650) 555-7321; password reset sent.',
      });
      const contact = await call(mine.token, 'POST', CONTACTS, PERSON);
      assert.equal(contact.statusCode, 201, contact.body);
      // A word that only contains a name is no mention of the person.
      const near = await call(mine.token, 'POST', TICKETS, {
        subject: 'Zenobiana theme',
        description: 'The Zenobiana colours are off.',
      });
      assert.equal(near.statusCode, 201, near.body);

      // Before the erasure, the contact's page lists the tickets it will rewrite: this
      // portal's only.
      const portalId = await services.accounts.portalIdFor(mine.portalCode);
      const person = { ...PERSON, portalId, id: contact.json().data.id as string };
      const naming = await services.tickets.ticketsNaming(person, 10);
      assert.deepEqual(
        naming.map((n) => [n.id, n.subject, n.status]),
        [[id, text.subject, 'new']],
      );

      const erased = await call(mine.token, 'DELETE', `${CONTACTS}/${contact.json().data.id}`);
      assert.equal(erased.statusCode, 200, erased.body);
      const { anonymised } = erased.json().data;
      assert.deepEqual(
        [anonymised.tickets, anonymised.ticketComments, anonymised.ticketNotes],
        [1, 1, 1],
      );

      const texts = async (ticketId: string) =>
        (
          await queryRows<{ text: string }>(
            services.storage,
            sql`select subject || ' ' || description as text from support_tickets
                  where id = ${ticketId}
                union all select body from ticket_comments where ticket_id = ${ticketId}
                union all select body from ticket_notes where ticket_id = ${ticketId}`,
          )
        ).map((r) => r.text);
      const after = await texts(id);
      assert.equal(after.length, 3, 'ticket, comment and note are all kept');
      for (const stored of after)
        for (const needle of NEEDLES)
          assert.ok(!stored.toLowerCase().includes(needle.toLowerCase()), `${needle} in ${stored}`);
      assert.deepEqual(after, [
        'erased erased cannot log in Customer erased (erased) reports a lockout.',
        'erased called again from erased, then from erased.',
        'Checked the account of erased, erased, erased; password reset sent.',
      ]);
      // Another portal's ticket is not this erasure's business.
      assert.deepEqual(await texts(otherId), [`${text.subject} ${text.description}`]);
    });
  });
}
