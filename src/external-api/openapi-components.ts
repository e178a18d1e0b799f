/**
 * The last pass over the OpenAPI document `@fastify/swagger` builds from the route schemas, so
 * that generated clients get names and enums (docs/architecture.md "external-api/"):
 *
 * - every schema with a `title` (`Type.Object({...}, { title: 'Ticket' })`) moves to
 *   `components.schemas.<title>` and is replaced by a `$ref` where it was used; its local
 *   `description` stays beside the `$ref` (OpenAPI 3.1 allows that);
 * - an `anyOf` of constants (TypeBox's `Union` of `Literal`s) becomes one `enum`;
 * - a `discriminator` gets its `mapping` (value → branch `$ref`);
 * - a query or header parameter with a `default` is not `required` (the server fills it), and a
 *   request body's properties carry their defaults in words only (see `withoutDefaults`);
 * - every tag an operation uses is declared;
 * - two different schemas with one title, or two operations with one `operationId`, throw: a
 *   route that would break a generated client fails the OpenAPI tests instead of shipping.
 *
 * @see https://spec.openapis.org/oas/v3.1.0#components-object
 * @see https://spec.openapis.org/oas/v3.1.0#reference-object
 */
import { isDeepStrictEqual } from 'node:util';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{anyOf: [{const: 'a'}, {const: 'b'}]}` → `{type: 'string', enum: ['a', 'b']}`. */
function constUnionToEnum(node: Json): Json {
  const branches = node.anyOf;
  if (!Array.isArray(branches) || branches.length === 0) return node;
  if (!branches.every((b) => isObject(b) && 'const' in b && Object.keys(b).length <= 2))
    return node;
  const values = branches.map((b) => (b as Json).const);
  const { anyOf: _anyOf, ...rest } = node;
  const types = [...new Set(values.map((v) => (typeof v === 'number' ? 'number' : typeof v)))];
  return { ...(types.length === 1 && { type: types[0] }), ...rest, enum: values };
}

/**
 * A `oneOf` told apart by a `discriminator` (Ajv's, which takes no `mapping`) with the mapping
 * OpenAPI needs: each value of the property → the `$ref` of its branch (without one, OpenAPI
 * would match the value against the branch's schema name).
 */
function withDiscriminatorMapping(node: Json, components: Record<string, Json>): Json {
  const d = node.discriminator;
  if (!isObject(d) || typeof d.propertyName !== 'string' || 'mapping' in d) return node;
  if (!Array.isArray(node.oneOf)) return node;
  const mapping: Record<string, string> = {};
  for (const branch of node.oneOf) {
    const ref = isObject(branch) ? branch.$ref : undefined;
    if (typeof ref !== 'string') return node;
    const target = components[ref.replace('#/components/schemas/', '')];
    const tag: unknown = isObject(target?.properties)
      ? target.properties[d.propertyName]
      : undefined;
    const value: unknown = isObject(tag) && Array.isArray(tag.enum) ? tag.enum[0] : undefined;
    if (typeof value !== 'string') return node;
    mapping[value] = ref;
  }
  return { ...node, discriminator: { ...d, mapping } };
}

/** Walks the document's schemas bottom-up, hoisting titled ones into `components.schemas`. */
class SchemaHoister {
  readonly components: Record<string, Json>;

  constructor(components: Record<string, Json>) {
    this.components = components;
  }

  /** `node` with its named schemas replaced by `$ref`s (a copy; the input is not changed). */
  visit(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((n) => this.visit(n));
    if (!isObject(node)) return node;
    const copy = withDiscriminatorMapping(
      constUnionToEnum(
        Object.fromEntries(Object.entries(node).map(([k, v]) => [k, this.visit(v)])),
      ),
      this.components,
    );
    const title = copy.title;
    // A schema names its kind with `type`, `properties`, `enum` or a combinator; an Operation
    // or an Info object (which also have no `title` here) never has those together with one.
    if (typeof title !== 'string' || !/^[A-Za-z][A-Za-z0-9]*$/.test(title)) return copy;
    if (!['type', 'properties', 'enum', 'anyOf', 'oneOf', 'allOf'].some((k) => k in copy))
      return copy;
    const { description, ...named } = copy;
    const existing = this.components[title];
    if (existing === undefined) this.components[title] = named;
    else if (!isDeepStrictEqual(existing, named)) {
      throw new Error(`OpenAPI: two different schemas are titled ${title}; rename one.`);
    }
    return {
      $ref: `#/components/schemas/${title}`,
      ...(typeof description === 'string' && { description }),
    };
  }
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * A request body's schema without `default` keywords. The server applies them, so the field is
 * optional; but openapi-typescript (with its default `defaultNonNullable`) and others make a
 * property with a default required in the generated type, which would force clients to send
 * it. Each such field's description says its default in words instead.
 */
function withoutDefaults(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutDefaults);
  if (!isObject(schema)) return schema;
  const { default: _default, ...rest } = schema;
  for (const key of ['items', 'additionalProperties', 'not']) {
    if (key in rest) rest[key] = withoutDefaults(rest[key]);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
    if (Array.isArray(rest[key])) rest[key] = withoutDefaults(rest[key]);
  }
  if (isObject(rest.properties)) {
    rest.properties = Object.fromEntries(
      Object.entries(rest.properties).map(([k, v]) => [k, withoutDefaults(v)]),
    );
  }
  return rest;
}

/** RFC 7396's media type, which every PATCH of the API takes. */
const MERGE_PATCH = 'application/merge-patch+json';

/** The operations of a `paths` object, each with its path item. */
function* operationsOf(paths: Record<string, Json>): Generator<Json> {
  for (const item of Object.values(paths)) {
    for (const method of METHODS) if (isObject(item[method])) yield item[method];
  }
}

/**
 * The document with named schemas under `components.schemas`, enums, honest `required`
 * parameters and declared tags.
 *
 * @throws Error when two different schemas share a title or two operations an operationId.
 */
export function finishOpenApiDocument(document: Json): Json {
  const components = isObject(document.components) ? { ...document.components } : {};
  const schemas: Record<string, Json> = isObject(components.schemas)
    ? { ...(components.schemas as Record<string, Json>) }
    : {};
  const hoister = new SchemaHoister(schemas);
  const raw = structuredClone(document.paths ?? {}) as Record<string, Json>;
  // A PATCH takes RFC 7396's media type as well as JSON (its routes parse both alike).
  for (const item of Object.values(raw)) {
    const content = ((item.patch as Json | undefined)?.requestBody as Json | undefined)?.content;
    if (isObject(content) && content['application/json'] && !content[MERGE_PATCH])
      content[MERGE_PATCH] = structuredClone(content['application/json']);
  }
  for (const operation of operationsOf(raw)) {
    const content = (operation.requestBody as Json | undefined)?.content;
    for (const media of Object.values(isObject(content) ? content : {})) {
      if (isObject(media)) media.schema = withoutDefaults(media.schema);
    }
  }
  const paths = hoister.visit(raw) as Record<string, Json>;

  const operationIds = new Set<string>();
  const tags = Array.isArray(document.tags) ? [...(document.tags as Json[])] : [];
  for (const operation of operationsOf(paths)) {
    const id = operation.operationId;
    if (typeof id === 'string') {
      if (operationIds.has(id)) throw new Error(`OpenAPI: operationId ${id} is used twice.`);
      operationIds.add(id);
    }
    for (const tag of (operation.tags as string[] | undefined) ?? []) {
      if (!tags.some((t) => t.name === tag)) tags.push({ name: tag });
    }
    for (const parameter of (operation.parameters as Json[] | undefined) ?? []) {
      // The server applies the default: a client need not send the parameter.
      const schema = parameter.schema;
      if (isObject(schema) && 'default' in schema && parameter.in !== 'path') {
        delete parameter.required;
      }
    }
  }
  const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
  return { ...document, tags, paths, components: { ...components, schemas: sorted } };
}

/**
 * An operationId from an operation's summary: `Create a support ticket` → `createSupportTicket`
 * (articles dropped, camelCase). A route may set `schema.operationId` itself instead.
 */
export function operationIdFrom(summary: string): string {
  const words = summary
    .replace(/[^A-Za-z0-9 ]+/g, ' ')
    .split(' ')
    .filter((w) => w && !/^(a|an|the)$/i.test(w));
  return words
    .map((w, i) => (i === 0 ? w.toLowerCase() : w[0]!.toUpperCase() + w.slice(1).toLowerCase()))
    .join('');
}
