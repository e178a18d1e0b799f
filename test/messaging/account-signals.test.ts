/**
 * The provider's account signals end to end, over real storage and the sandbox provider over
 * real HTTP: the sandbox changes a number's quality rating and messaging limit tier and a
 * template's quality score and pauses it (its signed webhooks reach the app); GET
 * /messaging/numbers and /messaging/templates show the change at once, and the tenant's endpoint
 * gets `phone_number.quality_updated` and `template.status_updated`. And the parser: the
 * provider's payloads as documented, unknown fields allowed, a value that does not fit skipped.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { parseProviderWebhook } from '../../src/partner/cloud-api/provider-webhook-payload.ts';
import { hello, messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';
import { startReceiver } from '../webhooks/receiver.ts';

const API = '/api/v1/external/messaging';

async function list<T>(s: MessagingSetup, what: 'numbers' | 'templates'): Promise<T[]> {
  const res = await s.app.inject({ url: `${API}/${what}`, headers: { authorization: s.token } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ data: { items: T[] } }>().data.items;
}

type Number = { id: string; qualityRating: string; messagingLimitTier: string | null };
type Template = { id: string; name: string; status: string; qualityScore: string };

for (const backend of backends()) {
  describe(`account signals (${backend.name})`, () => {
    test('quality, tier, template quality and pause: shown at once, sent as events', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      await s.services.webhooks.start();
      await s.services.webhooks.startWorker();
      const { secret } = await s.services.webhooks.addEndpoint(
        s.portalId,
        {
          url: receiver.url,
          eventTypes: ['phone_number.quality_updated', 'template.status_updated'],
        },
        { actor: CLI_ACTOR },
      );
      receiver.secrets.push(secret);
      const number = s.numbers[0]!;
      const before = (await list<Number>(s, 'numbers')).find((n) => n.id === number)!;
      assert.deepEqual([before.qualityRating, before.messagingLimitTier], ['GREEN', 'TIER_2K']);

      const { cloud } = s.provider.sandbox;
      const flagged = await cloud.changeNumber(number, { quality_rating: 'YELLOW' });
      assert.ok(flagged.ok && flagged.deliveries.every((d) => d.status === 200));
      const yellow = (await list<Number>(s, 'numbers')).find((n) => n.id === number)!;
      assert.equal(yellow.qualityRating, 'YELLOW');
      const [quality] = await receiver.waitFor(1);
      assert.equal(quality!.event?.type, 'phone_number.quality_updated');
      const wabaId = (await s.services.partner.wabaIdsOf(s.portalId))[0]!;
      assert.deepEqual(quality!.event?.data, {
        phoneNumberId: number,
        displayPhoneNumber: quality!.event?.data.displayPhoneNumber,
        wabaId,
        event: 'FLAGGED',
        messagingLimitTier: 'TIER_2K',
      });
      assert.match(String(quality!.event?.data.displayPhoneNumber), /^\+1555[0-9]{7}$/);

      await cloud.changeNumber(number, { messaging_limit_tier: 'TIER_250' });
      const lower = (await list<Number>(s, 'numbers')).find((n) => n.id === number)!;
      assert.equal(lower.messagingLimitTier, 'TIER_250');
      const [, tier] = await receiver.waitFor(2);
      assert.equal(tier!.event?.data.event, 'DOWNGRADE');
      assert.equal(tier!.event?.data.messagingLimitTier, 'TIER_250');
      assert.equal(tier!.event?.data.previousMessagingLimitTier, 'TIER_2K');

      const helloWorld = cloud.templatesOf(wabaId).find((x) => x.name === 'hello_world')!;
      const unrated = (await list<Template>(s, 'templates')).find((x) => x.id === helloWorld.id)!;
      assert.equal(unrated.qualityScore, 'UNKNOWN');
      await cloud.changeTemplate(wabaId, helloWorld.id, { quality: 'RED' });
      const red = (await list<Template>(s, 'templates')).find((x) => x.id === helloWorld.id)!;
      assert.deepEqual([red.qualityScore, red.status], ['RED', 'APPROVED']);
      const [, , rated] = await receiver.waitFor(3);
      assert.equal(rated!.event?.type, 'template.status_updated');
      assert.deepEqual(rated!.event?.data, {
        templateId: helloWorld.id,
        name: 'hello_world',
        language: 'en_US',
        wabaId,
        qualityScore: { from: 'UNKNOWN', to: 'RED' },
      });

      await cloud.changeTemplate(wabaId, helloWorld.id, { pause: true });
      const paused = (await list<Template>(s, 'templates')).find((x) => x.id === helloWorld.id)!;
      assert.equal(paused.status, 'PAUSED');
      const [, , , pause] = await receiver.waitFor(4);
      assert.equal(pause!.event?.data.status, 'PAUSED');
      assert.equal(pause!.event?.data.reason, 'FIRST_PAUSE');
      // And a send of it is refused before anything is queued.
      const refused = await s.send(hello('+16505550301', number));
      assert.equal(refused.statusCode, 422, refused.body);
      assert.equal(refused.json().error.code, 'template_not_approved');

      // Signals in a row, with no read of the numbers between them (each drops the cached
      // lists): every one still names the number by its id.
      await cloud.changeNumber(number, { quality_rating: 'GREEN' });
      await cloud.changeNumber(number, { quality_rating: 'RED' });
      await cloud.changeNumber(number, { messaging_limit_tier: 'TIER_2K' });
      const signals = (await receiver.waitFor(7)).slice(4);
      assert.deepEqual(
        signals.map((d) => [d.event?.type, d.event?.data.phoneNumberId]),
        Array(3).fill(['phone_number.quality_updated', number]),
      );
    });
  });
}

describe('account signals as the webhook parser reads them', () => {
  const body = (field: string, value: unknown) => ({
    object: 'whatsapp_business_account',
    entry: [{ id: '102000000101', time: 1764000000, changes: [{ field, value }] }],
  });

  test('the documented payloads, unknown fields allowed', () => {
    const quality = parseProviderWebhook(
      body('phone_number_quality_update', {
        display_phone_number: '15550783881',
        event: 'UPGRADE',
        old_limit: 'TIER_1K',
        current_limit: 'TIER_10K',
        max_daily_conversations_per_business: 'TIER_10K',
        something_new: true,
      }),
    );
    assert.deepEqual(quality, {
      ok: true,
      skipped: 0,
      skippedIds: [],
      changes: [
        {
          kind: 'phone_quality',
          wabaId: '102000000101',
          event: {
            wabaId: '102000000101',
            displayPhoneNumber: '15550783881',
            event: 'UPGRADE',
            messagingLimitTier: 'TIER_10K',
            previousMessagingLimitTier: 'TIER_1K',
          },
        },
      ],
    });
    const template = parseProviderWebhook(
      body('message_template_quality_update', {
        previous_quality_score: 'GREEN',
        new_quality_score: 'YELLOW',
        message_template_id: 12345678,
        message_template_name: 'order_shipped',
        message_template_language: 'en_US',
      }),
    );
    assert.ok(template.ok);
    assert.deepEqual(template.changes[0], {
      kind: 'template_quality',
      wabaId: '102000000101',
      event: {
        wabaId: '102000000101',
        templateId: '12345678',
        name: 'order_shipped',
        language: 'en_US',
        qualityScore: 'YELLOW',
        previousQualityScore: 'GREEN',
      },
    });
    const paused = parseProviderWebhook(
      body('message_template_status_update', {
        event: 'PAUSED',
        message_template_id: 12345678,
        message_template_name: 'order_shipped',
        message_template_language: 'en_US',
        reason: null,
        other_info: { title: 'SECOND_PAUSE', description: 'Paused for 6 hours.' },
      }),
    );
    assert.ok(paused.ok);
    assert.deepEqual(paused.changes[0], {
      kind: 'template',
      wabaId: '102000000101',
      event: {
        wabaId: '102000000101',
        templateId: '12345678',
        name: 'order_shipped',
        language: 'en_US',
        status: 'PAUSED',
        reason: 'SECOND_PAUSE',
      },
    });
  });

  test('a value that does not fit is skipped, the rest kept', () => {
    const parsed = parseProviderWebhook({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '102000000101',
          changes: [
            { field: 'phone_number_quality_update', value: { event: 'FLAGGED' } },
            {
              field: 'message_template_quality_update',
              value: { new_quality_score: 'RED', message_template_id: 'not digits' },
            },
            {
              field: 'phone_number_quality_update',
              value: { display_phone_number: '+1 555-078-3881', event: 'FLAGGED' },
            },
          ],
        },
      ],
    });
    assert.ok(parsed.ok);
    assert.equal(parsed.skipped, 2);
    assert.equal(parsed.changes.length, 1);
    assert.deepEqual(parsed.changes[0], {
      kind: 'phone_quality',
      wabaId: '102000000101',
      event: { wabaId: '102000000101', displayPhoneNumber: '15550783881', event: 'FLAGGED' },
    });
  });
});
