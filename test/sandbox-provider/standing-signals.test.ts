/**
 * The sandbox's messaging limit and the account's standing over real HTTP in Graph's wire format:
 * `GET /{waba-id}/phone_numbers?fields=whatsapp_business_manager_messaging_limit` answers the
 * business portfolio's limit (shared by the WABA's numbers; the deprecated
 * `messaging_limit_tier` still answers the same, as the provider keeps both), and the apps
 * page's forms send `template_category_update` (ahead and done), `user_preferences` (stop and
 * resume; a marketing template to a person who stopped fails with 131050),
 * `account_alerts`, `account_update` (`DISABLED_UPDATE`), `business_capability_update` and
 * `phone_number_name_update`, each in its reference page's shape.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventually } from '../helpers/instances.ts';
import { recordAppWebhooks, startTestProvider } from '../helpers/provider.ts';
import { call, changesOf, granted, type Item } from './sandbox-cloud.ts';

const PERSON = '16505551234';

describe('sandbox: messaging limit and account standing', () => {
  test('the portfolio limit: the current field, shared by the numbers; the deprecated one too', async (t) => {
    const p = await startTestProvider(t);
    const { token, wabaId, numbers } = await granted(p, '6801');
    const list = async () =>
      (
        await call(
          p,
          'GET',
          `/v21.0/${wabaId}/phone_numbers?fields=id,whatsapp_business_manager_messaging_limit,messaging_limit_tier`,
          { token },
        )
      ).body.data as Item[];
    assert.deepEqual(await list(), [
      {
        id: numbers[0],
        whatsapp_business_manager_messaging_limit: 'TIER_2K',
        messaging_limit_tier: 'TIER_2K',
      },
      {
        id: numbers[1],
        whatsapp_business_manager_messaging_limit: 'TIER_2K',
        messaging_limit_tier: 'TIER_2K',
      },
    ]);
    const hooks = await recordAppWebhooks(t, p);
    const set = await p.sandbox.cloud.businessCapability(wabaId, 'TIER_UNLIMITED');
    assert.ok(set.ok);
    assert.deepEqual(
      (await list()).map((n) => String(n.whatsapp_business_manager_messaging_limit)),
      ['TIER_UNLIMITED', 'TIER_UNLIMITED'],
    );
    assert.deepEqual(changesOf(hooks, 'business_capability_update')[0]!.value, {
      max_daily_conversation_per_phone: -1,
      max_daily_conversations_per_business: -1,
      max_phone_numbers_per_business: 20,
      max_phone_numbers_per_waba: 2,
    });
    const refused = await p.sandbox.cloud.businessCapability(wabaId, 'TIER_1K');
    assert.deepEqual(refused, { ok: false, reason: 'unknown_tier' });
  });

  test('category, preferences, alerts, a ban, a name: each webhook in its documented shape', async (t) => {
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { token, wabaId, numbers } = await granted(p, '6802');
    const form = async (path: string, fields: Record<string, string>) => {
      const res = await fetch(`${p.sandbox.url}${path}`, {
        method: 'POST',
        body: new URLSearchParams(fields),
      });
      return { status: res.status, html: await res.text() };
    };
    const apps = await (await fetch(`${p.sandbox.url}/sandbox/apps`)).text();
    for (const action of ['template-category', 'user-preferences', 'alert', 'capability', 'name'])
      assert.match(apps, new RegExp(`action="/sandbox/signals/${action}"`));
    const hello = p.sandbox.cloud.templatesOf(wabaId).find((x) => x.name === 'hello_world')!;
    const about = {
      message_template_id: Number(hello.id),
      message_template_name: 'hello_world',
      message_template_language: 'en_US',
    };

    const ahead = await form('/sandbox/signals/template-category', {
      waba_id: wabaId,
      template_id: hello.id,
      category: 'MARKETING',
      impending: 'yes',
    });
    assert.equal(ahead.status, 200, ahead.html);
    const [impending] = changesOf(hooks, 'template_category_update').map((c) => c.value as Item);
    assert.deepEqual(
      { ...impending, category_update_timestamp: undefined },
      {
        ...about,
        correct_category: 'MARKETING',
        new_category: 'UTILITY',
        category_update_timestamp: undefined,
      },
    );
    assert.ok(impending!.category_update_timestamp > Date.now() / 1000 + 23 * 3600);
    assert.equal(hello.category, 'UTILITY', 'announced only');
    await form('/sandbox/signals/template-category', {
      waba_id: wabaId,
      template_id: hello.id,
      category: 'MARKETING',
    });
    const done = changesOf(hooks, 'template_category_update')[1]!.value;
    assert.deepEqual(done, { ...about, previous_category: 'UTILITY', new_category: 'MARKETING' });
    const listed = await call(p, 'GET', `/v21.0/${wabaId}/message_templates?name=hello_world`, {
      token,
    });
    assert.equal((listed.body.data as Item[])[0]!.category, 'MARKETING');

    // A person stops marketing from the first number: a marketing template to them fails.
    await form('/sandbox/signals/user-preferences', {
      phone_number_id: numbers[0],
      wa_id: PERSON,
      value: 'stop',
    });
    const [stop] = changesOf(hooks, 'user_preferences').map((c) => c.value as Item);
    assert.equal(stop!.messaging_product, 'whatsapp');
    assert.equal(stop!.metadata.phone_number_id, numbers[0]);
    assert.deepEqual(stop!.contacts, [{ profile: { name: 'Sandbox Person' }, wa_id: PERSON }]);
    assert.deepEqual(
      { ...stop!.user_preferences[0], timestamp: undefined },
      {
        wa_id: PERSON,
        detail: 'User requested to stop marketing messages',
        category: 'marketing_messages',
        value: 'stop',
        timestamp: undefined,
      },
    );
    const send = () =>
      call(p, 'POST', `/v21.0/${numbers[0]}/messages`, {
        token,
        body: {
          messaging_product: 'whatsapp',
          to: PERSON,
          type: 'template',
          template: { name: 'hello_world', language: { code: 'en_US' } },
        },
      });
    const sent = await send();
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const wamid = (sent.body.messages as Item[])[0]!.id as string;
    const failedOf = () =>
      changesOf(hooks, 'messages')
        .flatMap((c) => ((c.value as Item).statuses ?? []) as Item[])
        .find((s) => s.id === wamid && s.status === 'failed');
    await eventually(() => failedOf() !== undefined, 'the failed status of the marketing template');
    assert.equal(failedOf()!.errors[0].code, 131050);
    await form('/sandbox/signals/user-preferences', {
      phone_number_id: numbers[0],
      wa_id: PERSON,
      value: 'resume',
    });
    assert.equal(
      (changesOf(hooks, 'user_preferences')[1]!.value as Item).user_preferences[0].value,
      'resume',
    );

    await form('/sandbox/signals/alert', {
      waba_id: wabaId,
      alert_type: 'INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED',
    });
    const alert = changesOf(hooks, 'account_alerts')[0]!.value as Item;
    assert.equal(alert.entity_type, 'BUSINESS');
    assert.deepEqual(alert.alert_info, {
      alert_severity: 'WARNING',
      alert_status: 'ACTIVE',
      alert_type: 'INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED',
      alert_description: 'Additional verification is required for your business',
    });
    await form('/sandbox/signals/account', { waba_id: wabaId, event: 'DISABLED_UPDATE' });
    const ban = changesOf(hooks, 'account_update')[0]!.value as Item;
    assert.equal(ban.event, 'DISABLED_UPDATE');
    assert.equal(ban.ban_info.waba_ban_state, 'SCHEDULE_FOR_DISABLE');
    assert.match(ban.ban_info.waba_ban_date, /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/);
    await form('/sandbox/signals/name', { phone_number_id: numbers[1], decision: 'REJECTED' });
    const name = changesOf(hooks, 'phone_number_name_update')[0]!.value as Item;
    assert.deepEqual(Object.keys(name).sort(), [
      'decision',
      'display_phone_number',
      'rejection_reason',
      'requested_verified_name',
    ]);
    assert.match(name.display_phone_number, /^1555[0-9]{7}$/);
    assert.deepEqual([name.decision, name.rejection_reason], ['REJECTED', 'INVALID_FORMAT']);
    assert.equal(
      (await form('/sandbox/signals/name', { phone_number_id: '1', decision: 'APPROVED' })).status,
      404,
    );
  });
});
