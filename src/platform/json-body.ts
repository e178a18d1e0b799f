/**
 * The JSON body parser every JSON route uses: Fastify's own (`error` on `__proto__` and
 * `constructor` keys), except that an empty body is no body. Many HTTP clients send
 * `Content-Type: application/json` on every request, a `DELETE` or a `GET` included; such a
 * request reaches its route with `body` undefined, and a route that needs a body refuses it
 * through its schema as for any missing body.
 *
 * @see https://fastify.dev/docs/latest/Reference/ContentTypeParser/
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.6 (Content-Length: 0 is no content)
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

type Done = (err: Error | null, body?: unknown) => void;

/** Fastify's JSON parser of `app`, with an empty (or all-whitespace) body read as no body. */
export function jsonBodyParser(
  app: FastifyInstance,
): (request: FastifyRequest, body: string, done: Done) => void {
  const json = app.getDefaultJsonParser('error', 'error') as (
    request: FastifyRequest,
    body: string,
    done: Done,
  ) => void;
  return (request, body, done) => {
    if (body.trim() === '') return done(null, undefined);
    json(request, body, done);
  };
}
