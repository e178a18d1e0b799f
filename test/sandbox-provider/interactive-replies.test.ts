/**
 * Tapping on the sandbox phone (its plain form, `POST /sandbox/phone/interactive`): a reply
 * button, a list row and a template's quick reply each reach the app as the Cloud API's inbound
 * webhook — `interactive` with `button_reply {id, title}` / `list_reply {id, title,
 * description}`, or `button {payload, text}` — with `context: {from: <the business number>, id:
 * <the tapped message's wamid>}`. A button the message does not have, or another person's
 * message, answers 400 and sends nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { recordAppWebhooks, startTestProvider, type TestProvider } from '../helpers/provider.ts';
import { call, granted, inbound, inboundValue, type Item } from './sandbox-cloud.ts';

const PERSON = '16505551234';

/** Tap `replyId` on message `wamid` as `from`; the status and the new message's wamid. */
async function tap(p: TestProvider, number: string, wamid: string, replyId: string, from = PERSON) {
  const res = await fetch(`${p.sandbox.url}/sandbox/phone/interactive`, {
    method: 'POST',
    body: new URLSearchParams({
      phone_number_id: number,
      from,
      message_id: wamid,
      reply_id: replyId,
    }),
  });
  const html = await res.text();
  return { status: res.status, wamid: /Message (wamid\.[A-Za-z0-9_-]+) written/.exec(html)?.[1] };
}

describe('interactive replies from the sandbox phone', () => {
  test('a tapped button, row or quick reply reaches the app with its context', async (t) => {
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { token, wabaId, numbers } = await granted(p, '7201');
    const [number] = numbers;
    const hello = await inbound(p, { phoneNumberId: number, from: PERSON, text: 'hi' });
    const business = inboundValue(hooks, hello).value.metadata.display_phone_number as string;
    const send = async (message: object) => {
      const res = await call(p, 'POST', `/v21.0/${number}/messages`, {
        token,
        body: { messaging_product: 'whatsapp', to: PERSON, ...message },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.messages[0].id as string;
    };
    const itemOf = (wamid: string | undefined) => {
      assert.ok(wamid, 'the tap wrote a message');
      const { value } = inboundValue(hooks, wamid);
      assert.deepEqual(value.contacts[0].wa_id, PERSON);
      return (value.messages as Item[])[0]!;
    };

    const buttons = await send({
      type: 'interactive',
      interactive: {
        type: 'button',
        body: { text: 'Confirm your visit?' },
        action: {
          buttons: [
            { type: 'reply', reply: { id: 'confirm', title: 'Confirm' } },
            { type: 'reply', reply: { id: 'reschedule', title: 'Reschedule' } },
          ],
        },
      },
    });
    const confirm = await tap(p, number, buttons, 'reschedule');
    assert.equal(confirm.status, 200);
    const buttonItem = itemOf(confirm.wamid);
    assert.equal(buttonItem.type, 'interactive');
    assert.deepEqual(buttonItem.interactive, {
      type: 'button_reply',
      button_reply: { id: 'reschedule', title: 'Reschedule' },
    });
    assert.deepEqual(buttonItem.context, { id: buttons, from: business });

    const list = await send({
      type: 'interactive',
      interactive: {
        type: 'list',
        body: { text: 'Pick a slot' },
        action: {
          button: 'Slots',
          sections: [
            { title: 'Monday', rows: [{ id: 'mon-9', title: '9:00', description: 'Morning' }] },
            { title: 'Tuesday', rows: [{ id: 'tue-14', title: '14:00' }] },
          ],
        },
      },
    });
    const row = itemOf((await tap(p, number, list, 'mon-9')).wamid);
    assert.deepEqual(row.interactive, {
      type: 'list_reply',
      list_reply: { id: 'mon-9', title: '9:00', description: 'Morning' },
    });
    assert.deepEqual(row.context, { id: list, from: business });
    const plain = itemOf((await tap(p, number, list, 'tue-14')).wamid);
    assert.deepEqual(plain.interactive.list_reply, { id: 'tue-14', title: '14:00' });

    p.sandbox.cloud.templatesOf(wabaId).push({
      id: '990003',
      name: 'promo',
      language: 'en_US',
      category: 'MARKETING',
      status: 'APPROVED',
      appId: undefined,
      components: [
        { type: 'BODY', text: 'New offers this week.' },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'QUICK_REPLY', text: 'Stop promotions' },
            { type: 'QUICK_REPLY', text: 'Tell me more' },
          ],
        },
      ],
    });
    const promo = await send({
      type: 'template',
      template: {
        name: 'promo',
        language: { code: 'en_US' },
        components: [
          {
            type: 'button',
            sub_type: 'quick_reply',
            index: 0,
            parameters: [{ type: 'payload', payload: 'STOP_PROMOS' }],
          },
        ],
      },
    });
    const stop = itemOf((await tap(p, number, promo, 'quick_reply:0')).wamid);
    assert.equal(stop.type, 'button');
    assert.deepEqual(stop.button, { payload: 'STOP_PROMOS', text: 'Stop promotions' });
    assert.deepEqual(stop.context, { id: promo, from: business });
    const more = itemOf((await tap(p, number, promo, 'quick_reply:1')).wamid);
    assert.deepEqual(more.button, { payload: 'Tell me more', text: 'Tell me more' });

    // Nothing the message does not offer, nothing of another person's thread.
    const before = p.sandbox.cloud.messages.length;
    assert.equal((await tap(p, number, buttons, 'cancel')).status, 400);
    assert.equal((await tap(p, number, list, 'confirm')).status, 400);
    assert.equal((await tap(p, number, promo, 'quick_reply:2')).status, 400);
    assert.equal((await tap(p, number, hello, 'confirm')).status, 400);
    assert.equal((await tap(p, number, buttons, 'confirm', '16505559999')).status, 400);
    assert.equal((await tap(p, numbers[1], buttons, 'confirm')).status, 400);
    assert.equal(p.sandbox.cloud.messages.length, before);
  });
});
