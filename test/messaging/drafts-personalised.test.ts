/**
 * Personalised drafts on both backends, through the API and the real send service to the
 * sandbox over HTTP: a template variable naming a contact field (`firstName`, `attributes.plan`)
 * is resolved per recipient when the draft is sent, a fallback stands in for a missing field,
 * and a recipient without the field and no fallback is refused in the send report with a reason
 * that names the field, never a value.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventually } from '../helpers/instances.ts';
import { GREETING, messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';

const DRAFTS = '/api/v1/external/messaging/drafts';

const call = (s: MessagingSetup, method: 'GET' | 'POST', url: string, payload?: object) =>
  s.app.inject({
    method,
    url,
    headers: { authorization: s.token },
    ...(payload && { payload }),
  });

async function contact(s: MessagingSetup, fields: Record<string, unknown>): Promise<string> {
  const res = await call(s, 'POST', '/api/v1/external/crm/contacts', fields);
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ data: { id: string } }>().data.id;
}

/** The body variables the sandbox phone `waId` received, in order of arrival. */
const paramsTo = (s: MessagingSetup, waId: string) =>
  s.provider.sandbox.cloud.messages
    .filter((m) => m.waId === waId && m.template)
    .map((m) => m.template!.params);

for (const backend of backends()) {
  describe(`messaging: personalised drafts (${backend.name})`, () => {
    test('contact fields resolved per recipient; fallbacks; refusals name the field', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 1000 });
      const ada = await contact(s, {
        phone: '+16505550101',
        firstName: 'Ada',
        attributes: { plan: 'gold' },
      });
      const nameless = await contact(s, { phone: '+16505550102', attributes: { plan: 7 } });
      await contact(s, { phone: '+16505550103', firstName: 'Cyrus' });
      const recipients = {
        contactIds: [ada, nameless],
        // Cyrus's phone (a contact, listed as a phone) and a phone that is no contact.
        phones: ['+16505550103', '+16505550104'],
      };
      const draft = async (parameters: unknown[], extra: string[] = []) => {
        const res = await call(s, 'POST', DRAFTS, {
          type: 'template',
          template: { name: GREETING.name, language: 'en_US', parameters },
          from: s.numbers[0],
          recipients: { ...recipients, contactIds: [...recipients.contactIds, ...extra] },
        });
        assert.equal(res.statusCode, 201, res.body);
        return res.json<{ data: { id: string; template: { parameters: unknown[] } } }>().data;
      };

      const named = await draft([{ contact: 'firstName', fallback: 'there' }]);
      assert.deepEqual(named.template.parameters, [{ contact: 'firstName', fallback: 'there' }]);
      const first = await call(s, 'POST', `${DRAFTS}/${named.id}/send`);
      assert.equal(first.statusCode, 200, first.body);
      assert.deepEqual(first.json().data.refused, []);
      assert.equal(first.json().data.queued, 4);
      await eventually(
        () => s.provider.sandbox.cloud.messages.filter((m) => m.template).length === 4,
        'the four greetings reached the sandbox',
      );
      assert.deepEqual(paramsTo(s, '16505550101'), [['Ada']]);
      assert.deepEqual(paramsTo(s, '16505550102'), [['there']]);
      assert.deepEqual(paramsTo(s, '16505550103'), [['Cyrus']]);
      assert.deepEqual(paramsTo(s, '16505550104'), [['there']]);

      const plan = await draft([{ contact: 'attributes.plan' }], ['ctc_unknown0']);
      const second = await call(s, 'POST', `${DRAFTS}/${plan.id}/send`);
      assert.equal(second.statusCode, 200, second.body);
      const report = second.json().data;
      assert.equal(report.queued, 2);
      assert.deepEqual(
        report.refused.map((r: { recipient: string; code: string }) => [r.recipient, r.code]),
        [
          ['ctc_unknown0', 'not_found'],
          ['+16505550103', 'invalid_template_parameters'],
          ['+16505550104', 'invalid_template_parameters'],
        ],
      );
      assert.match(report.refused[1].message, /no attributes\.plan for the variable \{\{1\}\}/);
      assert.match(report.refused[2].message, /is no contact/);
      assert.doesNotMatch(JSON.stringify(report), /Cyrus|gold/);
      await eventually(
        () => paramsTo(s, '16505550102').length === 2 && paramsTo(s, '16505550101').length === 2,
        'the plans reached the sandbox',
      );
      assert.deepEqual(paramsTo(s, '16505550101')[1], ['gold']);
      assert.deepEqual(paramsTo(s, '16505550102')[1], ['7']);
      assert.deepEqual((await call(s, 'GET', `${DRAFTS}/${plan.id}`)).json().data.sendResult, {
        queued: 2,
        refused: 3,
      });
    });

    test('every recipient refused: the draft stays unsent; an unknown field is 400', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 1000 });
      const bare = await contact(s, { phone: '+16505550201' });
      const res = await call(s, 'POST', DRAFTS, {
        type: 'template',
        template: {
          name: GREETING.name,
          language: 'en_US',
          parameters: [{ contact: 'lastName' }],
        },
        from: s.numbers[0],
        recipients: { contactIds: [bare] },
      });
      assert.equal(res.statusCode, 201, res.body);
      const sent = await call(s, 'POST', `${DRAFTS}/${res.json().data.id}/send`);
      assert.equal(sent.json().data.queued, 0);
      assert.equal(sent.json().data.refused[0].code, 'invalid_template_parameters');
      assert.equal(sent.json().data.sentAt, null);
      assert.equal(
        (await call(s, 'GET', `${DRAFTS}/${res.json().data.id}`)).json().data.sentAt,
        null,
      );

      for (const bad of [{ contact: 'password' }, { contact: 'firstName', other: 1 }, {}]) {
        const refused = await call(s, 'POST', DRAFTS, {
          type: 'template',
          template: { name: GREETING.name, language: 'en_US', parameters: [bad] },
          recipients: { contactIds: [bare] },
        });
        assert.equal(refused.statusCode, 400, JSON.stringify(bad));
        assert.equal(refused.json().error.code, 'invalid_request');
      }
    });
  });
}
