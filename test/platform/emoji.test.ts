import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isReactionEmoji } from '../../src/platform/emoji.ts';

test('a reaction emoji is one emoji grapheme or the empty string', () => {
  for (const ok of ['', '👍', '👍🏽', '❤️', '❤', '🇬🇧', '👨‍👩‍👧', '🏳️‍🌈', '1️⃣', '🏴󠁧󠁢󠁳󠁣󠁴󠁿', '😀']) {
    assert.equal(isReactionEmoji(ok), true, JSON.stringify(ok));
  }
  for (const no of ['ok', '👍👍', '1', 'a', '#', ' 👍', '👍 ', '❤️x', '\u200d', '\ufe0f', '🇬']) {
    assert.equal(isReactionEmoji(no), false, JSON.stringify(no));
  }
});
