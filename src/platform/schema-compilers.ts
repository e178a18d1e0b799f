/**
 * Fastify's schema compilers (Ajv for validation, fast-json-stringify for responses), one pair
 * for every app this process builds, instead of a new pair per app.
 *
 * Route schemas are module constants, so a second app in the same process (the tests build
 * hundreds, one per test) meets the very same schema objects. Ajv keeps each compiled validator
 * by its schema object, and `@fastify/ajv-compiler` keeps one Ajv per set of shared schemas and
 * options; the serializers are kept the same way here. A schema made anew per app simply
 * compiles again. What each compiled function does is unchanged: the same libraries with the
 * same options. Measured: Ajv and fast-json-stringify were about a fifth of a test file's CPU.
 *
 * One difference of a custom validator compiler in Fastify: header schemas are compiled as
 * written, not lower-cased first, so they must name headers in lower case (as HTTP/2 does and
 * as every header schema here does).
 *
 * @see https://fastify.dev/docs/latest/Reference/Server/#schemacontroller
 * @see docs/decisions.md "Speed (issue 15)"
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import {
  SerializerSelector,
  type SerializerCompiler,
  type SerializerFactory,
} from '@fastify/fast-json-stringify-compiler';

type Serializer = ReturnType<SerializerCompiler>;

const buildValidator = AjvCompiler();

/** Serializers by shared schemas and options, then by response schema object. */
const serializers = new Map<string, WeakMap<object, Serializer>>();

const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  const key = JSON.stringify([externalSchemas, options]);
  let byRoute = serializers.get(key);
  if (!byRoute) serializers.set(key, (byRoute = new WeakMap()));
  const cache = byRoute;
  return (route) => {
    const schema = route.schema;
    if (typeof schema !== 'object' || schema === null) return compile(route);
    let serializer = cache.get(schema);
    if (!serializer) cache.set(schema, (serializer = compile(route)));
    return serializer;
  };
};

/** Fastify's `schemaController.compilersFactory` option. */
export const sharedSchemaCompilers = { buildValidator, buildSerializer };
