/**
 * The sandbox's media, read receipts and account signals over real HTTP in Graph's wire format:
 * `GET /{media-id}` with a token → a URL that serves the bytes (SHA-256 as announced) with the
 * same bearer token, refused without it, gone after 5 minutes on the sandbox clock; an unknown
 * or deleted medium → code 100 `GraphMethodException`. `status: "read"` marks a person's
 * messages read. The apps page's buttons send `phone_number_quality_update`,
 * `message_template_quality_update`, `message_template_status_update` (PAUSED) and
 * `account_update`, and the listings report the change.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { recordAppWebhooks, startTestProvider } from '../helpers/provider.ts';
import { call, changesOf, granted, inbound, inboundValue, type Item } from './sandbox-cloud.ts';

const PERSON = '16505551234';
const MINUTE = 60_000;

describe('media, read receipts and account signals', () => {
  test('a medium: its URL with the token serves the bytes; no token, expiry and deletion are refused', async (t) => {
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { token, numbers } = await granted(p, '6701');
    const other = await granted(p, '6702');
    const wamid = await inbound(p, {
      phoneNumberId: numbers[0],
      from: PERSON,
      message: { type: 'image', image: { caption: 'Parcel' } },
    });
    const image = ((inboundValue(hooks, wamid).value.messages as Item[])[0]!.image ?? {}) as Item;

    const meta = await call(p, 'GET', `/v21.0/${image.id}`, { token });
    assert.equal(meta.status, 200, JSON.stringify(meta.body));
    assert.deepEqual(Object.keys(meta.body).sort(), [
      'file_size',
      'id',
      'messaging_product',
      'mime_type',
      'sha256',
      'url',
    ]);
    assert.equal(meta.body.messaging_product, 'whatsapp');
    assert.equal(meta.body.id, image.id);
    assert.equal(meta.body.mime_type, 'image/jpeg');
    assert.match(meta.body.sha256, /^[0-9a-f]{64}$/);
    const url = new URL(meta.body.url as string);
    assert.equal(url.origin, p.sandbox.url);
    assert.equal(url.pathname, '/whatsapp_business/attachments/');
    assert.ok(!url.href.includes(token), 'the URL carries no token');

    const download = (headers: Record<string, string> = {}) => fetch(url, { headers });
    const ok = await download({ authorization: `Bearer ${token}` });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('content-type'), 'image/jpeg');
    const bytes = Buffer.from(await ok.arrayBuffer());
    assert.equal(bytes.length, meta.body.file_size);
    assert.equal(Number(ok.headers.get('content-length')), bytes.length);
    const digest = createHash('sha256').update(bytes).digest();
    assert.equal(digest.toString('hex'), meta.body.sha256);
    assert.equal(digest.toString('base64'), image.sha256, 'the webhook announced the same bytes');
    assert.deepEqual([...bytes.subarray(0, 3)], [0xff, 0xd8, 0xff], 'a JPEG');

    const anonymous = await download();
    assert.equal(anonymous.status, 401);
    assert.equal(((await anonymous.json()) as Item).error.code, 190);
    assert.equal((await download({ authorization: 'Bearer nonsense' })).status, 401);
    // Another business's token neither reads the medium nor downloads it.
    assert.equal((await download({ authorization: `Bearer ${other.token}` })).status, 404);
    const foreign = await call(p, 'GET', `/v21.0/${image.id}`, { token: other.token });
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error.code, 100);
    assert.equal((await call(p, 'GET', `/v21.0/${image.id}`)).status, 401);

    // Five minutes after the GET the URL is gone; a new GET gives a working one.
    p.sandbox.advanceTime(5 * MINUTE - 1000);
    assert.equal((await download({ authorization: `Bearer ${token}` })).status, 200);
    p.sandbox.advanceTime(2000);
    const late = await download({ authorization: `Bearer ${token}` });
    assert.equal(late.status, 404);
    assert.equal(((await late.json()) as Item).error.code, 100);
    const fresh = await call(p, 'GET', `/v21.0/${image.id}?phone_number_id=${numbers[0]}`, {
      token,
    });
    const renewed = await fetch(fresh.body.url as string, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(renewed.status, 200);

    // The business deletes it (`DELETE /{media-id}`): another business may not; the GET and
    // the issued URL then both fail, and a second delete finds nothing.
    // @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#delete-media
    const del = (tok?: string, query = '') =>
      call(p, 'DELETE', `/v21.0/${image.id}${query}`, tok === undefined ? {} : { token: tok });
    assert.equal((await del()).status, 401);
    const foreignDelete = await del(other.token);
    assert.equal(foreignDelete.status, 400);
    assert.equal(foreignDelete.body.error.code, 100);
    assert.equal((await del(token, `?phone_number_id=${other.numbers[0]}`)).status, 400);
    const deleted = await del(token, `?phone_number_id=${numbers[0]}`);
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.deepEqual(deleted.body, { success: true });
    assert.equal(p.sandbox.cloud.medium(image.id as string), undefined);
    assert.equal((await del(token)).body.error.error_subcode, 33);
    for (const id of [image.id as string, '1234567890123456']) {
      const gone = await call(p, 'GET', `/v21.0/${id}`, { token });
      assert.equal(gone.status, 400);
      assert.equal(gone.body.error.code, 100);
      assert.equal(gone.body.error.error_subcode, 33);
      assert.equal(gone.body.error.type, 'GraphMethodException');
      assert.match(gone.body.error.fbtrace_id, /.+/);
    }
    const afterDelete = await call(p, 'GET', `/v21.0/${image.id}`, { token });
    assert.equal(afterDelete.status, 400);
    const issued = await fetch(fresh.body.url as string, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(issued.status, 404);
  });

  test('a document sample downloads as a PDF; a short configured TTL expires the URL', async (t) => {
    const p = await startTestProvider(t, { cloud: { mediaUrlTtlMs: 50 } });
    const hooks = await recordAppWebhooks(t, p);
    const { token, numbers } = await granted(p, '6703');
    const wamid = await inbound(p, {
      phoneNumberId: numbers[1],
      from: PERSON,
      message: { type: 'document', document: {} },
    });
    const doc = (inboundValue(hooks, wamid).value.messages as Item[])[0]!.document as Item;
    const meta = await call(p, 'GET', `/v21.0/${doc.id}`, { token });
    const res = await fetch(meta.body.url as string, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(res.headers.get('content-type'), 'application/pdf');
    assert.match(Buffer.from(await res.arrayBuffer()).toString('latin1', 0, 8), /^%PDF-1\./);
    await new Promise((r) => setTimeout(r, 80));
    const late = await fetch(meta.body.url as string, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(late.status, 404);
  });

  test('status "read" marks the message and the earlier ones read; an unknown message is refused', async (t) => {
    const p = await startTestProvider(t);
    await recordAppWebhooks(t, p);
    const { token, numbers } = await granted(p, '6704');
    const [a, b] = numbers;
    const first = await inbound(p, { phoneNumberId: a, from: PERSON, text: 'one' });
    const second = await inbound(p, { phoneNumberId: a, from: PERSON, text: 'two' });
    const toB = await inbound(p, { phoneNumberId: b, from: PERSON, text: 'other number' });
    const read = (number: string, messageId: string) =>
      call(p, 'POST', `/v21.0/${number}/messages`, {
        token,
        body: { messaging_product: 'whatsapp', status: 'read', message_id: messageId },
      });
    const readAt = (wamid: string) =>
      p.sandbox.cloud.messages.find((m) => m.wamid === wamid)?.readAt;
    assert.equal(readAt(first), undefined);

    const res = await read(a, second);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { success: true });
    assert.equal(typeof readAt(second), 'number');
    assert.equal(typeof readAt(first), 'number', 'earlier messages are read with it');
    assert.equal(readAt(toB), undefined, 'another number is another conversation');

    for (const [number, id] of [
      [a, 'wamid.unknown'],
      [a, toB],
    ] as const) {
      const refused = await read(number, id);
      assert.equal(refused.status, 400, id);
      assert.equal(refused.body.error.code, 100);
    }
    assert.equal(readAt(toB), undefined);
    assert.equal((await call(p, 'POST', `/v21.0/${b}/messages`, { body: {} })).status, 400);
    const page = await (await fetch(`${p.sandbox.url}/sandbox/phone`)).text();
    assert.match(page, /class="ticks read">read ✓✓/);
  });

  test('a typing indicator: read, "typing…" on the phone until the reply or 25 s', async (t) => {
    // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/typing-indicators
    const p = await startTestProvider(t);
    await recordAppWebhooks(t, p);
    const { token, numbers } = await granted(p, '6705');
    const [a] = numbers;
    const typing = (messageId: string, indicator: object = { type: 'text' }) =>
      call(p, 'POST', `/v21.0/${a}/messages`, {
        token,
        body: {
          messaging_product: 'whatsapp',
          status: 'read',
          message_id: messageId,
          typing_indicator: indicator,
        },
      });
    const phone = async () => (await fetch(`${p.sandbox.url}/sandbox/phone`)).text();
    const wamid = await inbound(p, { phoneNumberId: a, from: PERSON, text: 'are you there?' });
    assert.equal((await typing(wamid, { type: 'audio' })).body.error.code, 100);
    assert.doesNotMatch(await phone(), /is typing…/);

    const res = await typing(wamid);
    assert.deepEqual(res.body, { success: true });
    assert.equal(typeof p.sandbox.cloud.messages.find((m) => m.wamid === wamid)?.readAt, 'number');
    assert.match(await phone(), /data-typing="[0-9]+">[^<]* is typing…/);
    // The business's reply ends it.
    const reply = await call(p, 'POST', `/v21.0/${a}/messages`, {
      token,
      body: { messaging_product: 'whatsapp', to: PERSON, type: 'text', text: { body: 'Yes!' } },
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.doesNotMatch(await phone(), /is typing…/);
    // Without a reply, it ends after 25 seconds.
    await typing(wamid);
    assert.match(await phone(), /is typing…/);
    p.sandbox.advanceTime(25_001);
    assert.doesNotMatch(await phone(), /is typing…/);
  });

  test('account signals: quality, tier, template quality and pause reach the app and the listings', async (t) => {
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { token, wabaId, numbers } = await granted(p, '6705');
    const [a] = numbers;
    const form = async (path: string, fields: Record<string, string>) => {
      const res = await fetch(`${p.sandbox.url}${path}`, {
        method: 'POST',
        body: new URLSearchParams(fields),
      });
      return { status: res.status, html: await res.text() };
    };
    const apps = await (await fetch(`${p.sandbox.url}/sandbox/apps`)).text();
    assert.match(apps, /WhatsApp account signals/);
    assert.match(apps, /action="\/sandbox\/signals\/number"/);

    const flagged = await form('/sandbox/signals/number', {
      phone_number_id: a,
      quality_rating: 'YELLOW',
    });
    assert.equal(flagged.status, 200);
    assert.match(flagged.html, /answered 200/);
    await form('/sandbox/signals/number', { phone_number_id: a, messaging_limit_tier: 'TIER_10K' });
    await form('/sandbox/signals/number', { phone_number_id: a, quality_rating: 'GREEN' });
    const digits = (
      await call(p, 'GET', `/v21.0/${wabaId}/phone_numbers?fields=id,display_phone_number`, {
        token,
      })
    ).body.data[0].display_phone_number.replace(/[^0-9]/g, '');
    assert.deepEqual(
      changesOf(hooks, 'phone_number_quality_update').map((c) => c.value),
      [
        { display_phone_number: digits, event: 'FLAGGED', current_limit: 'TIER_2K' },
        {
          display_phone_number: digits,
          event: 'UPGRADE',
          old_limit: 'TIER_2K',
          current_limit: 'TIER_10K',
          max_daily_conversations_per_business: 'TIER_10K',
        },
        { display_phone_number: digits, event: 'UNFLAGGED', current_limit: 'TIER_10K' },
      ],
    );
    await form('/sandbox/signals/number', { phone_number_id: a, quality_rating: 'RED' });
    const listed = await call(
      p,
      'GET',
      `/v21.0/${wabaId}/phone_numbers?fields=id,quality_rating,messaging_limit_tier,whatsapp_business_manager_messaging_limit`,
      { token },
    );
    assert.deepEqual(listed.body.data[0], {
      id: a,
      quality_rating: 'RED',
      messaging_limit_tier: 'TIER_10K',
      whatsapp_business_manager_messaging_limit: 'TIER_10K',
    });
    assert.equal(listed.body.data[1].quality_rating, 'GREEN', 'the other number is unchanged');
    // The limit is the business portfolio's: the WABA's other number shares it.
    assert.equal(listed.body.data[1].whatsapp_business_manager_messaging_limit, 'TIER_10K');

    const hello = p.sandbox.cloud.templatesOf(wabaId)[0]!;
    const bad = await form('/sandbox/signals/template', {
      waba_id: wabaId,
      template_id: hello.id,
      action: 'PURPLE',
    });
    assert.equal(bad.status, 400);
    await form('/sandbox/signals/template', {
      waba_id: wabaId,
      template_id: hello.id,
      action: 'RED',
    });
    await form('/sandbox/signals/template', {
      waba_id: wabaId,
      template_id: hello.id,
      action: 'pause',
    });
    const about = {
      message_template_id: Number(hello.id),
      message_template_name: 'hello_world',
      message_template_language: 'en_US',
    };
    assert.deepEqual(
      changesOf(hooks, 'message_template_quality_update').map((c) => c.value),
      [{ previous_quality_score: 'UNKNOWN', new_quality_score: 'RED', ...about }],
    );
    const [paused] = changesOf(hooks, 'message_template_status_update').map((c) => c.value as Item);
    assert.deepEqual(
      { ...paused, other_info: undefined },
      {
        event: 'PAUSED',
        ...about,
        reason: null,
        other_info: undefined,
      },
    );
    assert.equal(paused!.other_info.title, 'FIRST_PAUSE');
    const templates = await call(
      p,
      'GET',
      `/v21.0/${wabaId}/message_templates?fields=name,status,quality_score`,
      { token },
    );
    assert.deepEqual(templates.body.data[0], {
      id: hello.id,
      name: 'hello_world',
      status: 'PAUSED',
      quality_score: { score: 'RED' },
    });
    // A paused template cannot be sent; resuming approves it again.
    const send = () =>
      call(p, 'POST', `/v21.0/${a}/messages`, {
        token,
        body: {
          messaging_product: 'whatsapp',
          to: PERSON,
          type: 'template',
          template: { name: 'hello_world', language: { code: 'en_US' } },
        },
      });
    assert.equal((await send()).body.error?.code, 132001);
    await form('/sandbox/signals/template', {
      waba_id: wabaId,
      template_id: hello.id,
      action: 'resume',
    });
    assert.equal((await send()).status, 200);

    // The account: a policy violation and a 24-hour restriction.
    await form('/sandbox/signals/account', { waba_id: wabaId, event: 'ACCOUNT_VIOLATION' });
    await p.sandbox.cloud.accountUpdate(wabaId, 'ACCOUNT_RESTRICTION');
    const [violation, restriction] = changesOf(hooks, 'account_update').map((c) => c.value as Item);
    assert.deepEqual(violation, {
      event: 'ACCOUNT_VIOLATION',
      violation_info: { violation_type: 'SCAM' },
    });
    assert.equal(restriction!.event, 'ACCOUNT_RESTRICTION');
    assert.equal(
      restriction!.restriction_info[0].restriction_type,
      'RESTRICTED_BIZ_INITIATED_MESSAGING',
    );
    assert.ok(restriction!.restriction_info[0].expiration > Date.now() / 1000 + 23 * 3600);
    const unknown = await form('/sandbox/signals/template', {
      waba_id: wabaId,
      template_id: '1',
      action: 'pause',
    });
    assert.equal(unknown.status, 404);
  });
});
