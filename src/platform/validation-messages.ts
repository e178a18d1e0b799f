/**
 * Schema validation failures in words a person acts on: one `{field, message}` per problem,
 * never a validator's own phrase ("must NOT have fewer than 1 characters", "items ## 1 and 0 are
 * identical", "/limit must be >= 1"). Ajv (Fastify's request validation, `allErrors: true`) and
 * TypeBox's `Value.Errors` (the admin commands) report failures in the same shape, so both go
 * through here.
 *
 * @see docs/decisions/0003-api-conventions.md
 * @see https://ajv.js.org/api.html#error-objects
 */
import type { ErrorDetail } from './errors.ts';
import { NO_CONTROL_PATTERN, PRINTABLE_TEXT_PATTERN } from './plain-text.ts';

/** A validation failure as Ajv and TypeBox report it. */
export interface SchemaFailure {
  keyword: string;
  instancePath: string;
  /** JSON pointer of the failing keyword in the schema (`#/properties/x/anyOf`). */
  schemaPath?: string | undefined;
  message?: string | undefined;
  params: Record<string, unknown>;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const FORMAT_WORDS: Record<string, string> = {
  'date-time': 'an ISO 8601 date and time (2026-01-31T12:00:00Z)',
  date: 'a date (YYYY-MM-DD)',
  email: 'an email address',
  uri: 'an absolute URL',
  url: 'an absolute URL',
  uuid: 'a UUID',
  emoji: 'exactly one emoji, or empty',
};

const or = (words: readonly string[]) =>
  words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;

const typeWords = (type: unknown) =>
  or(
    [type]
      .flat()
      .flatMap((t) => String(t).split(','))
      .map((t) => TYPE_WORDS[t] ?? t),
  );

const shown = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The message of one failure, for a person. */
export function messageOf(failure: SchemaFailure): string {
  const p = failure.params;
  const n = Number(p.limit);
  switch (failure.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'type':
      return `must be ${typeWords(p.type)}`;
    case 'minLength':
      return n <= 1 ? 'must not be empty' : `must be at least ${plural(n, 'character')} long`;
    case 'maxLength':
      return `must be at most ${plural(n, 'character')} long`;
    case 'pattern':
      if (p.pattern === '\\S') return 'must not be blank';
      if (p.pattern === NO_CONTROL_PATTERN) return 'must not contain control characters';
      if (p.pattern === PRINTABLE_TEXT_PATTERN)
        return 'must not be blank nor contain control or bidirectional formatting characters';
      return 'is not in the expected format';
    case 'minimum':
      return `must be at least ${n}`;
    case 'maximum':
      return `must be at most ${n}`;
    case 'exclusiveMinimum':
      return `must be greater than ${n}`;
    case 'exclusiveMaximum':
      return `must be less than ${n}`;
    case 'multipleOf':
      return `must be a multiple of ${shown(p.multipleOf)}`;
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).map(shown).join(', ')}`;
    case 'const':
      return `must be ${shown(p.allowedValue)}`;
    case 'uniqueItems':
      return 'must not contain the same value twice';
    case 'minItems':
      return n <= 1 ? 'must not be empty' : `must have at least ${plural(n, 'item')}`;
    case 'maxItems':
      return `must have at most ${plural(n, 'item')}`;
    case 'minProperties':
      return n <= 1 ? 'must not be empty' : `must have at least ${plural(n, 'field')}`;
    case 'maxProperties':
      return `must have at most ${plural(n, 'field')}`;
    case 'discriminator':
      // A `oneOf` told apart by a property (Ajv's `discriminator`): its value names no branch.
      return p.tagValue === undefined ? 'is required' : 'is not one of the accepted values';
    case 'format':
      return `must be ${FORMAT_WORDS[String(p.format)] ?? `in the ${String(p.format)} format`}`;
    default:
      return 'is not valid';
  }
}

/** The dotted field a failure names under `prefix` (`body`, `querystring`, '' for none). */
export function fieldOf(failure: SchemaFailure, prefix: string): string {
  const path = failure.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const p = failure.params;
  const child =
    (p.missingProperty as string | undefined) ??
    (failure.keyword === 'discriminator' ? (p.tag as string | undefined) : undefined) ??
    (p.additionalProperty as string | undefined) ??
    // TypeBox reports these two as lists.
    (Array.isArray(p.requiredProperties) ? String(p.requiredProperties[0]) : undefined) ??
    (Array.isArray(p.additionalProperties) ? String(p.additionalProperties[0]) : undefined);
  return [prefix, path, child].filter(Boolean).join('.') || prefix || 'request';
}

/**
 * An `anyOf` in words from the failures of its branches: `must be one of: a, b` for a union of
 * constants, `must be a string or null` for a union of types.
 */
function anyOfMessage(branches: readonly SchemaFailure[]): string {
  if (branches.length > 0 && branches.every((b) => b.keyword === 'const')) {
    return `must be one of: ${branches.map((b) => shown(b.params.allowedValue)).join(', ')}`;
  }
  if (branches.length > 0 && branches.every((b) => b.keyword === 'type')) {
    return `must be ${typeWords(branches.map((b) => b.params.type))}`;
  }
  return 'does not match any of the accepted forms';
}

/**
 * Every failure as one detail, in the order reported: the branches of an `anyOf` fold into one
 * message, TypeBox's `boolean` twin of `additionalProperties` is dropped, and a field is named
 * once, with its first problem (an empty string is `must not be empty`, not also blank).
 */
export function validationDetails(
  failures: readonly SchemaFailure[],
  prefix: string,
): ErrorDetail[] {
  const unions = failures.filter((f) => f.keyword === 'anyOf' || f.keyword === 'oneOf');
  const branchOf = (f: SchemaFailure) =>
    unions.find((u) => u !== f && u.schemaPath && f.schemaPath?.startsWith(`${u.schemaPath}/`));
  const seen = new Set<string>();
  const details: ErrorDetail[] = [];
  for (const failure of failures) {
    if (failure.keyword === 'boolean' || branchOf(failure)) continue;
    const message =
      failure.keyword === 'anyOf' || failure.keyword === 'oneOf'
        ? anyOfMessage(failures.filter((f) => branchOf(f) === failure))
        : messageOf(failure);
    const field = fieldOf(failure, prefix);
    if (seen.has(field)) continue;
    seen.add(field);
    details.push({ field, message });
  }
  return details;
}
