/**
 * The error envelope of every JSON response that fails, and the Fastify handlers that produce
 * it (errors, unknown routes, malformed requests rejected before routing).
 *
 * @see docs/api-tokens.md "The envelope"
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { databaseFailureKind } from './database-errors.ts';
import {
  AppError,
  ERROR_CODES,
  ERROR_STATUS,
  UsageError,
  type ErrorCode,
  type ErrorDetail,
} from './errors.ts';

/** What each error code means, for the API reference. */
export const ERROR_MEANINGS: Record<ErrorCode, string> = {
  invalid_request:
    'Malformed input: body or query validation (see `details`), both token headers, bad JSON.',
  missing_token: 'No API token was sent (a `WWW-Authenticate` challenge is included).',
  invalid_token: 'The API token is unknown, malformed or was regenerated.',
  invalid_signature:
    "A provider webhook's `X-Hub-Signature-256` is missing or wrong (not an API error).",
  insufficient_scope: 'The token lacks a scope this route needs (see `requiredScopes`).',
  insufficient_credit:
    "The portal's credit does not cover the message's price (GET /messaging/credit); an " +
    'operator tops it up.',
  not_found: "Unknown route, or a resource that does not exist in the token's portal.",
  idempotency_conflict:
    'The Idempotency-Key was used in the last 24 hours with a different request.',
  conflict:
    'A unique value is already taken (e.g. a contact phone); `details` names the field and the ' +
    "existing resource's `id`.",
  not_connected:
    'The route needs an active provider connection; connect the business account on /connect.',
  recipient_opted_out: 'The contact opted out of WhatsApp messages (consent `opted_out`).',
  outside_service_window:
    'Free text needs an inbound message from the recipient in the last 24 hours; send an ' +
    'approved template instead.',
  template_not_approved:
    'The template (name and language) is not APPROVED at the provider (pending, rejected, ' +
    'paused or unknown).',
  provider_error: 'The provider failed or refused the call; retry later.',
  provider_timeout: 'The provider did not answer in time; retry later.',
  payload_too_large: 'The request body is over 64 KiB.',
  unsupported_media_type: 'The request body is not `application/json`.',
  rate_limited: 'Too many requests; wait the `Retry-After` seconds.',
  internal_error: 'Something failed on our side; quote the request id to support.',
  unavailable: 'Storage is not answering; retry later.',
};

/**
 * JSON schema of the envelope restricted to `codes` (all codes by default), for route
 * `response` declarations and OpenAPI.
 */
export function errorEnvelopeFor(codes: readonly ErrorCode[] = ERROR_CODES, description?: string) {
  return Type.Object(
    {
      success: Type.Literal(false),
      error: Type.Object({
        code: Type.Union(codes.map((c) => Type.Literal(c))),
        message: Type.String({ description: 'For people; never parse it, use `code`.' }),
        requestId: Type.String({ description: 'Also in the `X-Request-Id` header.' }),
        details: Type.Optional(
          Type.Array(
            Type.Object({
              field: Type.String(),
              message: Type.String(),
              id: Type.Optional(
                Type.String({ description: 'The existing resource holding the value (conflict).' }),
              ),
            }),
            {
              description: 'Which input was wrong, and how (validation errors).',
            },
          ),
        ),
        requiredScopes: Type.Optional(
          Type.Array(Type.String(), { description: 'The scopes the route needs.' }),
        ),
      }),
    },
    description === undefined ? {} : { description },
  );
}

/** JSON schema of the envelope, any code. */
export const ErrorEnvelopeSchema = errorEnvelopeFor(ERROR_CODES);

/**
 * Route `response` entries for the given error codes: one envelope schema per HTTP status,
 * its `code` restricted to those codes and its description explaining each.
 */
export function errorResponses(codes: readonly ErrorCode[]): Record<number, TSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<number, TSchema> = {};
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[status] = errorEnvelopeFor(
      group,
      group.map((c) => `\`${c}\`: ${ERROR_MEANINGS[c]}`).join(' '),
    );
  }
  return out;
}

export interface ErrorEnvelope {
  success: false;
  error: {
    code: ErrorCode;
    message: string;
    requestId: string;
    details?: ErrorDetail[];
    requiredScopes?: string[];
  };
}

export function envelope(error: AppError, requestId: string): ErrorEnvelope {
  const body: ErrorEnvelope = {
    success: false,
    error: { code: error.code, message: error.message, requestId },
  };
  if (error.details) body.error.details = error.details;
  if (error.requiredScopes) body.error.requiredScopes = [...error.requiredScopes];
  return body;
}

/** Map any thrown value to an AppError. Unknown errors become a bare `internal_error`. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  // A service's refusal of its input (an unknown portal, a weak password): the message is
  // written for the caller.
  if (err instanceof UsageError)
    return new AppError('invalid_request', err.message, { cause: err });
  const e = err as Partial<FastifyError> & {
    validation?: {
      instancePath?: string;
      message?: string;
      params?: { missingProperty?: string; additionalProperty?: string };
    }[];
  };
  if (e.validation) {
    const details = e.validation.map((v) => ({
      field:
        [
          e.validationContext,
          (v.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.'),
          v.params?.missingProperty ?? v.params?.additionalProperty,
        ]
          .filter(Boolean)
          .join('.') || 'request',
      message: v.params?.additionalProperty ? 'is not a known field' : (v.message ?? 'is invalid'),
    }));
    return new AppError('invalid_request', 'The request is not valid; see details.', {
      details,
      cause: err,
    });
  }
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is too large.', { cause: err });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'Send the body as application/json.', {
        cause: err,
      });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_request', 'The request body is not valid JSON.', { cause: err });
  }
  if (e.statusCode === 429) {
    return new AppError('rate_limited', 'Too many requests; retry later.', { cause: err });
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new AppError('invalid_request', 'The request is not valid.', { cause: err });
  }
  switch (databaseFailureKind(err)) {
    case 'data':
      return new AppError(
        'invalid_request',
        'The request contains a value that cannot be stored (such as a NUL character).',
        { cause: err },
      );
    case 'unavailable':
      return new AppError('unavailable', 'Storage is not answering; retry later.', { cause: err });
    case null:
      break;
  }
  return new AppError(
    'internal_error',
    'Something went wrong on our side. Quote the request id if you contact support.',
    { cause: err },
  );
}

/** Send `error` as the envelope with its status and headers. */
export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  return reply
    .code(error.status)
    .headers(error.headers)
    .type('application/json; charset=utf-8')
    .send(envelope(error, reply.request.id));
}

/**
 * Install the root error and not-found handlers. Server errors are logged with their cause;
 * client errors at `info`, without the request's content.
 */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const error = toAppError(err);
    if (error.status >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ code: error.code }, 'request refused');
    return sendError(reply, error);
  });
  app.setNotFoundHandler(notFoundHandler);
}

/**
 * 404 `not_found` for an unknown route. The path is not echoed: a client that put a credential
 * in it would get it back in a response body.
 */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(
    reply,
    new AppError('not_found', `No ${request.method} route matches this path.`),
  );
}

/**
 * Fastify `clientErrorHandler`: requests so malformed that Node's parser refuses them (headers
 * over the size limit, bad characters) still get the envelope, then the socket closes.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable) return;
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : ERROR_STATUS.invalid_request;
  const body = JSON.stringify({
    success: false,
    error: {
      code: 'invalid_request',
      message: tooLarge ? 'The request headers are too large.' : 'The request is malformed.',
      requestId: 'none',
    },
  });
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
}

/** An incoming `X-Request-Id` is kept only when it is short and plain; otherwise we mint one. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFor(req: IncomingMessage, mint: () => string): string {
  const incoming = req.headers['x-request-id'];
  // A value shaped like an API token is never echoed or logged (a client pasting the wrong header).
  return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) && !/ptk_/i.test(incoming)
    ? incoming
    : mint();
}
