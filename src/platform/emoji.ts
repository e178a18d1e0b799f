/**
 * Emoji as WhatsApp takes them in a reaction: one emoji, or nothing.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/messages/reaction-messages
 * @see https://www.unicode.org/reports/tr51/#def_rgi_set (RGI emoji)
 * @see https://www.unicode.org/reports/tr29/#Grapheme_Cluster_Boundaries
 */

// Built at run time: the `v` flag (Unicode sets, needed for the `RGI_Emoji` property of
// strings) is newer than the TypeScript target's regular-expression syntax.
/** One recommended emoji (sequences included), or one pictograph with its emoji selector. */
const ONE_EMOJI = new RegExp('^(?:\\p{RGI_Emoji}|\\p{Extended_Pictographic}\\u{FE0F}?)$', 'v');

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * Whether `text` is exactly one emoji grapheme (`👍`, `👍🏽`, `❤️`, `🇬🇧`, `👨‍👩‍👧`), or the
 * empty string (the reaction removed). Letters, digits, two emoji or an emoji with text are not.
 */
export function isReactionEmoji(text: string): boolean {
  if (text === '') return true;
  const [first, second] = graphemes.segment(text);
  return first !== undefined && second === undefined && ONE_EMOJI.test(text);
}

/**
 * The string formats of the request schemas beyond Ajv's own (`ajv-formats`), by name:
 * `emoji` is {@link isReactionEmoji}.
 *
 * @see https://ajv.js.org/guide/formats.html#user-defined-formats
 */
export const SCHEMA_FORMATS = {
  emoji: { type: 'string', validate: isReactionEmoji },
} as const;
