/**
 * Messaging settings' parsing (keyword lists, replies, the errors on their fields) and keyword
 * matching; their storage and defaults on both backends.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { portals } from '../../src/db/schema/portals.ts';
import { keywordConsent } from '../../src/messaging/conversations/consent-keywords.ts';
import {
  DEFAULT_MESSAGING_SETTINGS,
  messagingSettings,
  parseSettings,
  saveMessagingSettings,
} from '../../src/messaging/conversations/messaging-settings.ts';
import { backends } from '../helpers/storage.ts';

const input = {
  optOutKeywords: 'stop, Arret\nquit',
  optInKeywords: 'start start',
  optOutReply: '  Bye.  ',
  optInReply: '',
  autoMarkRead: true,
};

describe('messaging settings: parsing and keywords', () => {
  test('lists upper-cased and deduplicated, replies trimmed or null', () => {
    const parsed = parseSettings(input);
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.settings, {
      optOutKeywords: ['STOP', 'ARRET', 'QUIT'],
      optInKeywords: ['START'],
      optOutReply: 'Bye.',
      optInReply: null,
      autoMarkRead: true,
    });
  });

  test('errors on their fields: overlap, too long, too many, control characters', () => {
    const bad = parseSettings({
      ...input,
      optInKeywords: 'stop',
      optOutKeywords: `${'x'.repeat(31)}`,
      optOutReply: 'y'.repeat(1025),
    });
    assert.ok(!bad.ok);
    assert.deepEqual(bad.problems.map((p) => p.field).sort(), ['optOutKeywords', 'optOutReply']);
    const overlap = parseSettings({ ...input, optInKeywords: 'QUIT' });
    assert.ok(!overlap.ok);
    assert.equal(overlap.problems[0]!.field, 'optInKeywords');
    const many = parseSettings({
      ...input,
      optOutKeywords: Array.from({ length: 21 }, (_, i) => `W${i}`).join(' '),
    });
    assert.ok(!many.ok);
    const control = parseSettings({ ...input, optOutKeywords: 'ST\u200eOP' });
    assert.ok(!control.ok);
  });

  test('a keyword is the whole text, trimmed, any case', () => {
    const s = DEFAULT_MESSAGING_SETTINGS;
    assert.equal(keywordConsent(' stop ', s), 'opted_out');
    assert.equal(keywordConsent('Unsubscribe', s), 'opted_out');
    assert.equal(keywordConsent('unstop', s), 'opted_in');
    assert.equal(keywordConsent('stop it', s), null);
    assert.equal(keywordConsent('', s), null);
  });
});

for (const backend of backends()) {
  describe(`messaging settings stored (${backend.name})`, () => {
    test('defaults without a row; saved and replaced', async (t) => {
      const storage = await backend.open();
      t.after(() => storage.close());
      const [portal] = await storage.db
        .insert(portals)
        .values({ portalCode: 'settings', name: 'S' })
        .returning({ id: portals.id });
      assert.deepEqual(await messagingSettings(storage.db, portal!.id), DEFAULT_MESSAGING_SETTINGS);
      const parsed = parseSettings(input);
      assert.ok(parsed.ok);
      await saveMessagingSettings(storage.db, portal!.id, parsed.settings);
      await saveMessagingSettings(storage.db, portal!.id, { ...parsed.settings, optInReply: 'Hi' });
      assert.deepEqual(await messagingSettings(storage.db, portal!.id), {
        ...parsed.settings,
        optInReply: 'Hi',
      });
    });
  });
}
