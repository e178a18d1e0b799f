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

  test('a keyword is matched after NFKC, without punctuation, white space and emoji around it', () => {
    const s = DEFAULT_MESSAGING_SETTINGS;
    for (const text of [
      'Stop!',
      'STOP.',
      '\uff33\uff34\uff2f\uff30', // full-width ＳＴＯＰ
      '\u3000stop\u3000',
      '¡Stop!',
      'stop 🛑',
      '🙏🏽 STOP 🙏🏽',
      'STOP 👍🏻\u200d',
      'stop ❤️',
      'Stop!!! 🇬🇧',
      '\ufeffSTOP\u200b',
    ]) {
      assert.equal(keywordConsent(text, s), 'opted_out', JSON.stringify(text));
    }
    assert.equal(keywordConsent('Start :)', s), 'opted_in');
    for (const text of [
      'STOP please',
      'Stop, please',
      'S T O P',
      'stop1',
      '!!!',
      '🛑',
      'NONSTOP',
    ]) {
      assert.equal(keywordConsent(text, s), null, JSON.stringify(text));
    }
    // A portal's own keywords are read the same way.
    const own = parseSettings({ ...input, optOutKeywords: '\uff21\uff32\uff32\uff25\uff34' });
    assert.ok(own.ok);
    assert.deepEqual(own.settings.optOutKeywords, ['ARRET']);
    assert.equal(keywordConsent('arret.', own.settings), 'opted_out');
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
