/**
 * Text a person reads as it is: no control characters (Unicode Cc: C0, DEL, C1) and no
 * bidirectional controls (the Cf marks, embeddings, overrides and isolates of UAX #9). Control
 * characters break CSV exports, terminals and message templates; a bidi control such as U+202E
 * (right-to-left override) makes a name or subject show something other than what it holds.
 * Contact fields, agent and portal names and ticket subjects all follow this one rule.
 *
 * @see https://www.unicode.org/reports/tr9/#Explicit_Directional_Formatting_Characters
 * @see https://www.unicode.org/reports/tr36/#Bidirectional_Text_Spoofing
 */

/** The refused characters, as the body of a regular-expression character class. */
const CONTROLS =
  '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';

/** A JSON-schema `pattern`: no refused character anywhere. */
export const NO_CONTROL_PATTERN = `^[^${CONTROLS}]*$`;

/** A JSON-schema `pattern`: no refused character, and at least one that is not white space. */
export const PRINTABLE_TEXT_PATTERN = `^[^${CONTROLS}]*[^${CONTROLS}\\s][^${CONTROLS}]*$`;

const ANY_CONTROL = new RegExp(`[${CONTROLS}]`, 'u');

/** Whether `text` holds a control or bidirectional formatting character. */
export function hasControlCharacters(text: string): boolean {
  return ANY_CONTROL.test(text);
}
