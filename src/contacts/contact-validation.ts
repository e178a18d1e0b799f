/**
 * Validation messages of contact input, the same for a route's body (Fastify's Ajv) and an
 * import row (TypeBox's compiled checker over the same schema): each failure becomes one
 * `{field, message}` a person can act on.
 *
 * @see docs/reference/external-api.md "The capability areas"
 */
import { Compile } from 'typebox/compile';
import { AppError, type ErrorDetail } from '../platform/errors.ts';
import { messageOf } from '../platform/validation-messages.ts';
import {
  ATTRIBUTE_KEY_PATTERN,
  ContactFieldsSchema,
  PatchContactBodySchema,
} from './contact-schemas.ts';

/** A validation failure as both Ajv and TypeBox report it. */
export interface SchemaFailure {
  keyword: string;
  instancePath: string;
  message?: string | undefined;
  params: Record<string, unknown>;
}

function messageFor(failure: SchemaFailure): string {
  const { keyword, params } = failure;
  switch (keyword) {
    case 'pattern':
      return 'must not contain control characters';
    case 'propertyNames':
      return `attribute keys must match ${ATTRIBUTE_KEY_PATTERN}`;
    case 'type':
      return Array.isArray(params.type) && params.type.includes('boolean')
        ? 'must be a string, number or boolean (attributes are flat: no objects or arrays)'
        : messageOf(failure);
    case 'maxProperties':
      return `must have at most ${String(params.limit)} attributes`;
    case 'format':
      return 'must be an email address';
    case 'uniqueItems':
      return 'must not repeat a tag';
    default:
      return messageOf(failure);
  }
}

/** The field a failure names, dotted, under `prefix` (`body`, or '' for an import row). */
function fieldFor(failure: SchemaFailure, prefix: string): string {
  const path = failure.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const params = failure.params;
  const extra =
    (params.missingProperty as string | undefined) ??
    (params.additionalProperty as string | undefined) ??
    (Array.isArray(params.requiredProperties) ? String(params.requiredProperties[0]) : undefined) ??
    (Array.isArray(params.additionalProperties)
      ? String(params.additionalProperties[0])
      : undefined) ??
    (params.propertyName as string | undefined) ??
    (Array.isArray(params.propertyNames) ? String(params.propertyNames[0]) : undefined);
  return [prefix, path, extra].filter(Boolean).join('.') || (prefix === '' ? 'row' : 'request');
}

/** One detail per field (the first failure of each), in the order reported. */
export function detailsOf(failures: readonly SchemaFailure[], prefix: string): ErrorDetail[] {
  const byField = new Map<string, ErrorDetail>();
  for (const failure of failures) {
    if (failure.keyword === 'boolean') continue; // TypeBox's twin of additionalProperties
    // The key pattern's own failure comes with a `propertyNames` one that names the key.
    if (failure.keyword === 'pattern' && failure.params.pattern === ATTRIBUTE_KEY_PATTERN) continue;
    const field = fieldFor(failure, prefix);
    if (byField.has(field)) continue;
    const unknown = failure.keyword === 'additionalProperties' || failure.keyword === 'required';
    const message =
      failure.keyword === 'additionalProperties'
        ? 'is not a known field'
        : unknown
          ? 'is required'
          : messageFor(failure);
    byField.set(field, { field, message });
  }
  return [...byField.values()];
}

/**
 * Fastify's per-route `schemaErrorFormatter` for the contacts routes: the 400 `invalid_request`
 * with the same messages as an import row gets.
 */
export function contactSchemaError(failures: SchemaFailure[], dataVar: string): AppError {
  return new AppError('invalid_request', 'The request is not valid; see details.', {
    details: detailsOf(failures, dataVar),
  });
}

const checkFields = Compile(ContactFieldsSchema);

/** Check one import row against the create schema; an empty list when it is valid. */
export function rowFailures(row: unknown): ErrorDetail[] {
  if (checkFields.Check(row)) return [];
  return detailsOf([...checkFields.Errors(row)] as SchemaFailure[], '');
}

const checkPatch = Compile(PatchContactBodySchema);

/**
 * Check a merge patch against `PATCH /crm/contacts/{id}`'s schema (for a caller that is not that
 * route, e.g. the contact's page); an empty list when it is valid. Fields are named without a
 * prefix (`email`, `attributes.plan`).
 */
export function patchFailures(patch: unknown): ErrorDetail[] {
  if (checkPatch.Check(patch)) return [];
  return detailsOf([...checkPatch.Errors(patch)] as SchemaFailure[], '');
}
