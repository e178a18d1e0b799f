/**
 * Meta's documented payloads of the account-standing webhook fields (test/fixtures/meta-webhooks,
 * each with the reference page it comes from), replayed signed through Portico's provider-webhook
 * route over real storage, each checked where it lands: `template_category_update` → the
 * `template.category_changed` event and sends priced at the new category from the day it
 * applies; `user_preferences` → marketing templates refused (422 `marketing_stopped`) and the
 * consent history (scope `marketing`, source `provider`), then allowed again on resume;
 * `account_alerts`, `account_update` restrictions, violations and bans,
 * `business_capability_update`, `phone_number_name_update` → their tenant events and the
 * /settings banner (the signals in force).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { signalsInForce } from '../../src/messaging/provider-webhooks/account-standing.ts';
import { greeting, messagingSetup } from '../helpers/messaging.ts';
import { replaySigned } from '../helpers/provider-webhook.ts';
import { ROOT } from '../helpers/root.ts';
import { backends } from '../helpers/storage.ts';
import { startReceiver } from '../webhooks/receiver.ts';

// From the repository root: the suite runs this file bundled into test-output/suite.
const FIXTURES = pathToFileURL(join(ROOT, 'test', 'fixtures', 'meta-webhooks') + '/');

interface Fixture {
  source: string;
  body: {
    entry: { id: string; changes: { field: string; value: Record<string, unknown> }[] }[];
  };
}

function fixture(name: string): Fixture {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Fixture;
}

/** The fixture with the test's ids: its WABA, and what `patch` sets on the change's value. */
function replayBody(name: string, wabaId: string, patch: Record<string, unknown> = {}) {
  const f = fixture(name);
  const body = structuredClone(f.body);
  body.entry[0]!.id = wabaId;
  Object.assign(body.entry[0]!.changes[0]!.value, patch);
  return JSON.stringify(body);
}

const EVENT_TYPES = [
  'template.category_changed',
  'contact.marketing_preference_changed',
  'account.alert',
  'account.updated',
  'account.capability_updated',
  'phone_number.name_updated',
];

test('every fixture names the Meta reference page it comes from', () => {
  const names = readdirSync(FIXTURES).filter((n) => n.endsWith('.json'));
  assert.ok(names.length >= 10);
  for (const name of names) {
    const f = fixture(name.replace(/\.json$/, ''));
    const field = f.body.entry[0]!.changes[0]!.field;
    assert.equal(
      f.source,
      `https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/${field}`,
      name,
    );
  }
});

for (const backend of backends()) {
  describe(`Meta's documented account-standing payloads, replayed (${backend.name})`, () => {
    test('categories, marketing preferences, alerts, restrictions, capabilities, names', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      await s.services.webhooks.start();
      await s.services.webhooks.startWorker();
      const { secret } = await s.services.webhooks.addEndpoint(
        s.portalId,
        { url: receiver.url, eventTypes: EVENT_TYPES },
        { actor: CLI_ACTOR },
      );
      receiver.secrets.push(secret);
      const wabaId = (await s.services.partner.wabaIdsOf(s.portalId))[0]!;
      const from = s.numbers.find((n) => n.startsWith(wabaId))!;
      const greetingId = `${wabaId}7`;
      const person = '+16505551234';

      // A utility template, priced as one (4 minor units) before any change.
      const before = await s.send(greeting(person, from, 'Ada'));
      assert.equal(before.statusCode, 202, before.body);
      assert.equal(before.json().data.price.amount, 4);

      // Announced ahead: stored with the day it applies; sends before it keep the old price.
      await replaySigned(
        s,
        replayBody('template_category_update-impending', wabaId, {
          message_template_id: Number(greetingId),
          category_update_timestamp: Math.floor(Date.now() / 1000) + 86_400,
        }),
      );
      const [impending] = await receiver.waitFor(1);
      assert.equal(impending!.event?.type, 'template.category_changed');
      assert.equal(impending!.event?.data.impending, true);
      assert.deepEqual(
        [impending!.event?.data.previousCategory, impending!.event?.data.category],
        ['UTILITY', 'MARKETING'],
      );
      const ahead = await s.send(greeting(person, from, 'Ada'));
      assert.equal(ahead.json().data.price.amount, 4, 'not yet: priced as utility');

      // Done (the entry's time, in the past): sends are priced as marketing from now on.
      await replaySigned(
        s,
        replayBody('template_category_update-completed', wabaId, {
          message_template_id: Number(greetingId),
        }),
      );
      const [, done] = await receiver.waitFor(2);
      assert.deepEqual(done!.event?.data, {
        templateId: greetingId,
        name: 'order_confirmation',
        language: 'en_US',
        wabaId,
        previousCategory: 'UTILITY',
        category: 'MARKETING',
        effectiveAt: '2025-11-24T16:00:00.000Z',
        impending: false,
      });
      const after = await s.send(greeting(person, from, 'Ada'));
      assert.equal(after.statusCode, 202, after.body);
      assert.equal(after.json().data.price.amount, 11, 'priced as marketing');

      // The person stops marketing from the number: a marketing template is refused.
      await replaySigned(
        s,
        replayBody('user_preferences-stop', wabaId, { metadata: { phone_number_id: from } }),
      );
      const [, , stopped] = await receiver.waitFor(3);
      assert.equal(stopped!.event?.type, 'contact.marketing_preference_changed');
      assert.equal(stopped!.event?.data.preference, 'stopped');
      assert.equal(stopped!.event?.data.phoneNumberId, from);
      const contactId = String(stopped!.event?.data.contactId);
      const refused = await s.send(greeting(person, from, 'Ada'));
      assert.equal(refused.statusCode, 422, refused.body);
      assert.equal(refused.json().error.code, 'marketing_stopped');
      const other = s.numbers.find((n) => n !== from && n.startsWith(wabaId))!;
      const fromOther = await s.send(greeting(person, other, 'Ada'));
      assert.notEqual(fromOther.statusCode, 422, 'the stop is per business number');
      const detail = await s.app.inject({
        url: `/api/v1/external/crm/contacts/${contactId}`,
        headers: { authorization: s.token },
      });
      assert.equal(detail.statusCode, 200, detail.body);
      const history = detail.json().data.consentHistory as Record<string, unknown>[];
      assert.deepEqual(
        { ...history[0], at: undefined },
        {
          from: 'unknown',
          to: 'opted_out',
          source: 'provider',
          scope: 'marketing',
          phoneNumberId: from,
          messageId: null,
          at: undefined,
        },
      );
      assert.equal(detail.json().data.consent.whatsapp, 'unknown', 'WhatsApp consent unchanged');

      // A replay of the same stop changes nothing; the resume allows marketing again.
      await replaySigned(
        s,
        replayBody('user_preferences-stop', wabaId, { metadata: { phone_number_id: from } }),
      );
      await replaySigned(
        s,
        replayBody('user_preferences-resume', wabaId, { metadata: { phone_number_id: from } }),
      );
      const [, , , resumed] = await receiver.waitFor(4);
      assert.equal(resumed!.event?.data.preference, 'resumed');
      const allowed = await s.send(greeting(person, from, 'Ada'));
      assert.equal(allowed.statusCode, 202, allowed.body);

      // Alerts, restrictions, violations, bans, capabilities and names: events and banner.
      const number = (await s.services.messagingProvider.numbers(s.portalId)).find(
        (n) => n.id === from,
      )!;
      const digits = number.displayPhoneNumber.replace(/[^0-9]/g, '');
      await replaySigned(s, replayBody('account_alerts', wabaId));
      await replaySigned(
        s,
        replayBody('account_update-restriction', wabaId, {
          restriction_info: [
            {
              restriction_type: 'RESTRICTED_BIZ_INITIATED_MESSAGING',
              expiration: Math.floor(Date.now() / 1000) + 86_400,
            },
          ],
        }),
      );
      await replaySigned(s, replayBody('account_update-violation', wabaId));
      await replaySigned(s, replayBody('account_update-disabled', wabaId));
      await replaySigned(s, replayBody('business_capability_update', wabaId));
      await replaySigned(
        s,
        replayBody('phone_number_name_update', wabaId, { display_phone_number: digits }),
      );
      // Deliveries may arrive in any order: each is found by its type and word.
      const standing = (await receiver.waitFor(10)).slice(4);
      const word = (d: (typeof standing)[number]) =>
        String(d.event?.data.event ?? d.event?.data.decision);
      const of = (w: string) => standing.find((d) => word(d) === w)!.event!.data;
      assert.deepEqual(
        standing.map((d) => [d.event?.type, word(d)]).sort(),
        [
          ['account.alert', 'INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED'],
          ['account.updated', 'ACCOUNT_RESTRICTION'],
          ['account.updated', 'ACCOUNT_VIOLATION'],
          ['account.updated', 'DISABLED_UPDATE'],
          ['account.capability_updated', 'CAPABILITY_UPDATE'],
          ['phone_number.name_updated', 'REJECTED'],
        ].sort(),
      );
      assert.equal(of('INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED').severity, 'warning');
      assert.equal(of('ACCOUNT_RESTRICTION').severity, 'critical');
      assert.equal(of('DISABLED_UPDATE').banState, 'SCHEDULE_FOR_DISABLE');
      assert.equal(of('CAPABILITY_UPDATE').maxDailyConversationsPerBusiness, 2000);
      assert.deepEqual(of('REJECTED'), {
        phoneNumberId: from,
        displayPhoneNumber: `+${digits}`,
        wabaId,
        decision: 'REJECTED',
        requestedVerifiedName: 'Lucky Shrub',
        rejectionReason: 'INVALID_FORMAT',
      });

      const banner = await signalsInForce(s.services.storage.db, s.portalId);
      assert.equal(banner.length, 5, 'the newest five in force');
      assert.deepEqual(
        banner.map((b) => b.event),
        [
          'REJECTED',
          'CAPABILITY_UPDATE',
          'DISABLED_UPDATE',
          'ACCOUNT_VIOLATION',
          'ACCOUNT_RESTRICTION',
        ],
      );
      assert.match(banner[4]!.summary, /restricted until .*RESTRICTED_BIZ_INITIATED_MESSAGING/);
      assert.match(banner[1]!.summary, /messaging limit is now 2,000 people a day/);
      assert.match(banner[0]!.summary, /“Lucky Shrub”.*REJECTED \(INVALID_FORMAT\)/);
    });

    test('an expired restriction is kept out of the banner', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const wabaId = (await s.services.partner.wabaIdsOf(s.portalId))[0]!;
      // The page's example expiration is long past.
      await replaySigned(s, replayBody('account_update-restriction', wabaId));
      assert.deepEqual(await signalsInForce(s.services.storage.db, s.portalId), []);
      await replaySigned(s, replayBody('account_update-violation', wabaId));
      assert.deepEqual(
        (await signalsInForce(s.services.storage.db, s.portalId)).map((b) => b.event),
        ['ACCOUNT_VIOLATION'],
      );
    });
  });
}
