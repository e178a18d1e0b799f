/**
 * Every request body and every required parameter of the OpenAPI document carries an example
 * that the server itself would accept: the reference page's "Test Request" starts from these,
 * so a missing or invalid one is a request that fails before the reader changed anything.
 *
 * Each example is checked with the server's own validator (`platform/schema-compilers.ts`, with
 * the app's Ajv options: bodies as sent, parameters coerced) against the operation's schema in
 * the document, its `$ref`s resolved into `$defs`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OPENAPI_URL } from '../../src/app.ts';
import { AJV_CUSTOM_OPTIONS, sharedSchemaCompilers } from '../../src/platform/schema-compilers.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: Json;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}

interface Media {
  schema: Json;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}

interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, Media> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null;

/**
 * The document's schema back as the JSON Schema the route validates with: references to
 * `components.schemas` point into `$defs`, and what only OpenAPI adds (a discriminator's
 * `mapping`, which Ajv's `discriminator` does not take) is left out.
 */
function asJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(asJsonSchema);
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string')
      out.$ref = value.replace('#/components/schemas/', '#/$defs/');
    else if (key === 'discriminator' && isObject(value)) {
      const { mapping: _mapping, ...rest } = value;
      out.discriminator = rest;
    } else out[key] = asJsonSchema(value);
  }
  return out;
}

/** The examples of a media type or a parameter: `example`, or each of `examples`. */
function examplesOf(holder: Media | Parameter): unknown[] {
  if (holder.example !== undefined) return [holder.example];
  return Object.values(holder.examples ?? {}).map((e) => e.value);
}

const [backend] = backends();

describe('OpenAPI: examples', () => {
  test('every request body and required parameter has an example its schema accepts', async (t) => {
    const { app } = await buildTestApp(t, backend!);
    const document = (await app.inject({ url: OPENAPI_URL })).json<{
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, unknown> };
    }>();
    const $defs = asJsonSchema(document.components.schemas);
    const compiler = sharedSchemaCompilers.buildValidator(
      {},
      {
        customOptions: { ...AJV_CUSTOM_OPTIONS },
      },
    );
    /** Problems of one example, in words, or [] when the server's validator accepts it. */
    const check = (schema: Json, example: unknown, httpPart: 'body' | 'params'): string[] => {
      // A parameter is checked alone, with the coercion the server applies to parameters.
      const validate = compiler({
        schema: { ...(asJsonSchema(schema) as Json), $defs },
        method: 'POST',
        url: '/example',
        httpPart,
      }) as ((data: unknown) => boolean) & { errors?: { message?: string }[] };
      return validate(example)
        ? []
        : (validate.errors ?? []).map((e) => `${JSON.stringify(e)}`).slice(0, 3);
    };

    const problems: string[] = [];
    let bodies = 0;
    let parameters = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation) continue;
        const name = `${operation.operationId} (${method.toUpperCase()} ${path})`;
        for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
          bodies++;
          const examples = examplesOf(media);
          if (examples.length === 0) problems.push(`${name}: no example of its ${type} body`);
          for (const example of examples) {
            // A multipart body's file part is bytes on the wire: its example names a file.
            const errors = check(media.schema, example, 'body');
            for (const e of errors) problems.push(`${name}: its ${type} example: ${e}`);
          }
        }
        for (const parameter of operation.parameters ?? []) {
          if (!parameter.required) continue;
          parameters++;
          const examples = examplesOf(parameter);
          const where = `${parameter.in} parameter ${parameter.name}`;
          if (examples.length === 0) problems.push(`${name}: no example of its ${where}`);
          for (const example of examples) {
            const errors = check(parameter.schema, example, 'params');
            for (const e of errors) problems.push(`${name}: its ${where} example: ${e}`);
          }
        }
      }
    }
    assert.ok(bodies >= 15, `request bodies walked: ${bodies}`);
    assert.ok(parameters >= 20, `required parameters walked: ${parameters}`);
    assert.deepEqual(problems, []);
  });

  test('the check refuses what the server refuses: a wrong type, a missing or unknown field', async () => {
    // The check itself can fail: a wrong type and a missing required field are caught.
    const compiler = sharedSchemaCompilers.buildValidator(
      {},
      {
        customOptions: { ...AJV_CUSTOM_OPTIONS },
      },
    );
    const validate = compiler({
      schema: {
        type: 'object',
        required: ['subject'],
        properties: { subject: { type: 'string' } },
        additionalProperties: false,
      },
      method: 'POST',
      url: '/example',
      httpPart: 'body',
    }) as (data: unknown) => boolean;
    assert.equal(validate({ subject: 'Hello' }), true);
    assert.equal(validate({ subject: false }), false, 'a body is not coerced');
    assert.equal(validate({}), false);
    assert.equal(validate({ subject: 'x', other: 1 }), false, 'unknown fields are refused');
  });
});
