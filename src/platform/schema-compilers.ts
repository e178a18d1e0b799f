/**
 * Fastify's schema compilers (Ajv for validation, fast-json-stringify for responses): one pair
 * for every app this process builds, and each route's functions compiled when first needed
 * instead of while the app starts.
 *
 * Shared: route schemas are module constants, so a second app in the same process (the tests
 * build hundreds, one per test) meets the very same schema objects. Ajv keeps each compiled
 * validator by its schema object, and `@fastify/ajv-compiler` keeps one Ajv per set of shared
 * schemas and options; the serializers are kept the same way here. A schema made anew per app
 * simply compiles again. Measured: Ajv and fast-json-stringify were about a fifth of a test
 * file's CPU.
 *
 * Deferred: compiling every route's schemas cost a restart about 400 ms of its 2.5 s of CPU
 * (`listen`: 250–450 ms on the development machine). Each function Fastify asks for is a stand-in that
 * compiles the real one at its first call (or when Fastify reads the validator's `schemaEnv`);
 * {@link compilePendingSchemas} compiles the rest once the server is listening (main.ts), one
 * per event-loop turn, so requests are answered meanwhile. What each compiled function does is
 * unchanged: the same libraries with the same options. A schema that does not compile fails
 * its test (`test/platform/schema-compilers.test.ts` compiles every route of the app).
 *
 * One difference of a custom validator compiler in Fastify: header schemas are compiled as
 * written, not lower-cased first, so they must name headers in lower case (as HTTP/2 does and
 * as every header schema here does).
 *
 * @see https://fastify.dev/docs/latest/Reference/Server/#schemacontroller
 * @see docs/decisions/0019-speed.md
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { AjvCompiler } from '@fastify/ajv-compiler';
import {
  SerializerSelector,
  type SerializerCompiler,
  type SerializerFactory,
} from '@fastify/fast-json-stringify-compiler';
import { SCHEMA_FORMATS } from './emoji.ts';

type ValidatorFactory = ReturnType<typeof AjvCompiler>;
type ValidatorCompiler = ReturnType<ValidatorFactory>;
type Validator = ReturnType<ValidatorCompiler>;
type Serializer = ReturnType<SerializerCompiler>;

/** Compilations asked for and not yet run (each removes itself when it runs). */
const pending = new Set<() => unknown>();

/** `compile` run once, at the first call of the returned function or by the warm-up. */
function once<T>(compile: () => T): () => T {
  let compiled: T | undefined;
  const get = (): T => {
    if (compiled === undefined) {
      pending.delete(get);
      compiled = compile();
    }
    return compiled;
  };
  pending.add(get);
  return get;
}

const ajvPool = AjvCompiler();

/**
 * The validator factory: request bodies checked as sent, everything else (query string, path
 * parameters, headers: text on the wire) coerced to its declared type.
 *
 * Fastify's Ajv coerces by default (`coerceTypes: 'array'`): `{"subject": false}` would pass as
 * the string `"false"`, `{"latitude": [null]}` as `0`. A JSON body carries its own types, so
 * a wrong one is refused (400 naming the field). Form bodies (the pages) declare every field a
 * string or a list of strings, which needs no coercion either. Both know the project's own
 * string formats ({@link SCHEMA_FORMATS}).
 */
const buildValidator: ValidatorFactory = (externalSchemas, options) => {
  const customOptions = { ...options?.customOptions, formats: { ...SCHEMA_FORMATS } };
  const coercing = ajvPool(externalSchemas, { ...options, customOptions } as typeof options);
  const asSent = ajvPool(externalSchemas, {
    ...options,
    customOptions: { ...customOptions, coerceTypes: false },
  } as typeof options);
  return (route) => {
    // Fastify passes the route's definition (`@fastify/ajv-compiler`'s RouteDefinition), which
    // its own types declare as the bare schema.
    const part = (route as { httpPart?: string }).httpPart;
    const compile = part === 'body' ? asSent : coercing;
    const real = once(() => compile(route));
    // Ajv's `errors` after a call and its `schemaEnv` (Fastify reads it to pass the parent
    // object, so a root value can be coerced) are read through to the real validator.
    const validate = ((data: unknown, dataCxt?: unknown) =>
      (real() as (data: unknown, dataCxt?: unknown) => unknown)(data, dataCxt)) as Validator;
    Object.defineProperties(validate, {
      errors: { get: () => (real() as { errors?: unknown }).errors },
      schemaEnv: { get: () => (real() as { schemaEnv?: unknown }).schemaEnv },
    });
    return validate;
  };
};

/** Serializers by shared schemas and options, then by response schema object. */
const serializers = new Map<string, WeakMap<object, Serializer>>();

const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  // fast-json-stringify picks an `anyOf` branch with Ajv of its own: it knows the project's
  // formats too (an unknown one is warned about on every compile and matches anything).
  const withFormats = { ...options, ajv: { ...options?.ajv, formats: { ...SCHEMA_FORMATS } } };
  const compile = SerializerSelector()(externalSchemas, withFormats);
  const key = JSON.stringify([externalSchemas, options]);
  let byRoute = serializers.get(key);
  if (!byRoute) serializers.set(key, (byRoute = new WeakMap()));
  const cache = byRoute;
  return (route) => {
    const schema = route.schema;
    if (typeof schema !== 'object' || schema === null) return compile(route);
    let serializer = cache.get(schema);
    if (!serializer) {
      const real = once(() => compile(route));
      serializer = (data) => real()(data);
      cache.set(schema, serializer);
    }
    return serializer;
  };
};

/**
 * The Ajv options of every app (Fastify's `ajv.customOptions`): a schema that says
 * `additionalProperties: false` refuses unknown fields (400 naming them) instead of silently
 * dropping them, since a misspelt optional field is a client bug to report; `allowUnionTypes`:
 * a contact attribute is `type: [string, number, boolean]`, one error message instead of an
 * `anyOf`'s three; `allErrors`: a body's every problem is reported at once (bodies are at most
 * 64 KiB, so the extra work is bounded); `discriminator`: a `oneOf` told apart by a property.
 */
export const AJV_CUSTOM_OPTIONS = {
  removeAdditional: false,
  allowUnionTypes: true,
  allErrors: true,
  discriminator: true,
} as const;

/** Fastify's `schemaController.compilersFactory` option. */
export const sharedSchemaCompilers = { buildValidator, buildSerializer };

/**
 * Compiles every validator and serializer asked for and not yet compiled, one per event-loop
 * turn. Resolves when none is left; rejects with the first compilation error (a schema Ajv or
 * fast-json-stringify refuses), leaving that one to fail again at its first use.
 */
export async function compilePendingSchemas(): Promise<void> {
  for (const compile of pending) {
    await nextTurn();
    compile();
  }
}

/** How many compilations are waiting (for tests). */
export function pendingSchemaCount(): number {
  return pending.size;
}
