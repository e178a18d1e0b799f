/**
 * The pieces every API route's schema is built from, so that a null, a time, the success
 * envelope, a page and the error responses read the same on every route and in the OpenAPI
 * document (docs/architecture.md "api-kit/"), and the route's types come from its
 * schema through the TypeBox type provider instead of being restated.
 *
 * @see https://github.com/fastify/fastify-type-provider-typebox
 * @see https://spec.openapis.org/oas/v3.1.0#schema-object
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  Type,
  type TArray,
  type TLiteral,
  type TNull,
  type TObject,
  type TObjectOptions,
  type TSchema,
  type TSchemaOptions,
  type TString,
  type TUnion,
} from 'typebox';

export { errorResponses } from '../platform/error-envelope.ts';

/** A route plugin's instance, whose handlers take their types from the route's schema. */
export type ApiInstance = ReturnType<typeof typed>;

/**
 * The same instance, typed by the TypeBox provider: `request.body`, `query`, `params` and
 * `headers` get the static types of the route's schemas, and a handler's answer is checked
 * against its `response` schemas.
 */
export function typed(api: FastifyInstance) {
  return api.withTypeProvider<TypeBoxTypeProvider>();
}

/** `schema` or null (`anyOf: [schema, {type: 'null'}]`); `options` describe the whole. */
export const Nullable = <T extends TSchema>(
  schema: T,
  options?: TSchemaOptions,
): TUnion<[T, TNull]> => Type.Union([schema, Type.Null()], options);

/** An instant as ISO 8601 in UTC (`2026-01-31T12:00:00.000Z`), `format: date-time`. */
export const Iso = (description: string): TString =>
  Type.String({ format: 'date-time', description });

/** The success envelope, `{ success: true, data }`; `options.title` names it in the document. */
export const Envelope = <T extends TSchema>(
  data: T,
  options?: TObjectOptions,
): TObject<{ success: TLiteral<true>; data: T }> =>
  Type.Object({ success: Type.Literal(true), data }, options);

/** The `nextCursor` of a page: pass it back as `cursor`; null on the last page. */
export const NextCursor = Nullable(
  Type.String({ description: 'Pass as `cursor`; null on the last page.' }),
);

/**
 * A page of `item`s in the envelope: `{ success: true, data: { items, nextCursor } }`.
 *
 * @param options.items the description of `items` (e.g. its order).
 * @param options.title names the page in the document.
 */
export const Page = <T extends TSchema>(
  item: T,
  options: { items?: string; title?: string } = {},
): TObject<{
  success: TLiteral<true>;
  data: TObject<{ items: TArray<T>; nextCursor: typeof NextCursor }>;
}> =>
  Envelope(
    Type.Object({
      items: Type.Array(item, options.items === undefined ? {} : { description: options.items }),
      nextCursor: NextCursor,
    }),
    options.title === undefined ? {} : { title: options.title },
  );
