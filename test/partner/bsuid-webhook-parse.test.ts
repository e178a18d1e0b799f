/**
 * The provider's webhook as it names people since business-scoped user ids: a message from a
 * person who uses a username comes without `from` and `wa_id`, with `from_user_id`,
 * `contacts[].user_id`, `parent_user_id` and `profile.username`; a status to them with
 * `recipient_user_id` and no `recipient_id`. Each is parsed, not skipped.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseProviderWebhook } from '../../src/partner/cloud-api/provider-webhook-payload.ts';

const now = String(Math.floor(Date.now() / 1000));
const body = (value: Record<string, unknown>) => ({
  object: 'whatsapp_business_account',
  entry: [
    {
      id: '102290129340398',
      changes: [
        {
          field: 'messages',
          value: {
            messaging_product: 'whatsapp',
            metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
            ...value,
          },
        },
      ],
    },
  ],
});

test('a message from a username person without a phone is parsed with their BSUID', () => {
  const parsed = parseProviderWebhook(
    body({
      contacts: [
        {
          profile: { name: 'Sheena Nelson', username: 'sheena.nelson' },
          user_id: 'US.13491208655302741918',
          parent_user_id: 'US.ENT.11815799212886844830',
        },
      ],
      messages: [
        {
          from_user_id: 'US.13491208655302741918',
          id: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=',
          timestamp: now,
          type: 'text',
          text: { body: 'Does it come in another color?' },
        },
      ],
    }),
  );
  assert.ok(parsed.ok);
  assert.equal(parsed.skipped, 0);
  const change = parsed.changes[0]!;
  assert.equal(change.kind, 'inbound');
  const [event] = change.kind === 'inbound' ? change.events : [];
  assert.equal(event!.from, undefined);
  assert.equal(event!.fromUserId, 'US.13491208655302741918');
  assert.equal(event!.fromParentUserId, 'US.ENT.11815799212886844830');
  assert.equal(event!.username, 'sheena.nelson');
  assert.equal(event!.profileName, 'Sheena Nelson');
});

test('a message with a phone keeps it, and takes the BSUID from its contacts entry', () => {
  const parsed = parseProviderWebhook(
    body({
      contacts: [
        { profile: { name: 'Ada' }, wa_id: '16505551234', user_id: 'US.1234567890123456789' },
      ],
      messages: [
        { from: '16505551234', id: 'wamid.A', timestamp: now, type: 'text', text: { body: 'hi' } },
      ],
    }),
  );
  assert.ok(parsed.ok);
  const change = parsed.changes[0]!;
  const [event] = change.kind === 'inbound' ? change.events : [];
  assert.equal(event!.from, '16505551234');
  assert.equal(event!.fromUserId, 'US.1234567890123456789');
});

test('a message naming its sender by neither phone nor BSUID is skipped', () => {
  const parsed = parseProviderWebhook(
    body({ messages: [{ id: 'wamid.B', timestamp: now, type: 'text', text: { body: 'x' } }] }),
  );
  assert.ok(parsed.ok);
  assert.equal(parsed.skipped, 1);
  assert.deepEqual(parsed.skippedIds, ['wamid.B']);
});

test('a status to a person named only by BSUID is parsed', () => {
  const parsed = parseProviderWebhook(
    body({
      statuses: [
        {
          id: 'wamid.C',
          status: 'delivered',
          timestamp: now,
          recipient_user_id: 'US.13491208655302741918',
        },
      ],
    }),
  );
  assert.ok(parsed.ok);
  assert.equal(parsed.skipped, 0);
  const change = parsed.changes[0]!;
  const [event] = change.kind === 'statuses' ? change.events : [];
  assert.equal(event!.recipientId, undefined);
  assert.equal(event!.recipientUserId, 'US.13491208655302741918');
});

test('a system message reporting a changed BSUID is a user-id change, placed first', () => {
  const system = (type: string, extra: Record<string, unknown> = {}) => ({
    id: `wamid.${type}`,
    timestamp: now,
    type: 'system',
    ...extra,
    system: {
      body: 'User changed',
      type,
      previous_user_id: 'US.13491208655302741918',
      user_id: 'US.20937459123874510293',
      parent_user_id: 'US.ENT.11815799212886844830',
    },
  });
  const parsed = parseProviderWebhook(
    body({
      messages: [
        system('user_changed_user_id'),
        system('user_changed_number', { from: '16505551234' }),
      ],
    }),
  );
  assert.ok(parsed.ok);
  assert.equal(parsed.skipped, 0);
  const [ids, inbound] = parsed.changes;
  assert.equal(ids?.kind, 'user_ids');
  assert.deepEqual(
    ids.kind === 'user_ids' && ids.events.map((e) => [e.previousUserId, e.userId, e.parentUserId]),
    [
      ['US.13491208655302741918', 'US.20937459123874510293', 'US.ENT.11815799212886844830'],
      ['US.13491208655302741918', 'US.20937459123874510293', 'US.ENT.11815799212886844830'],
    ],
  );
  // A number change stays a message of the person's, as before; a BSUID change alone does not.
  assert.equal(inbound?.kind, 'inbound');
  assert.deepEqual(inbound.kind === 'inbound' && inbound.events.map((e) => e.wamid), [
    'wamid.user_changed_number',
  ]);
});
