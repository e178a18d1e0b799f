/**
 * The error envelope of every JSON response that fails, and the Fastify handlers that produce
 * it (errors, unknown routes, malformed requests rejected before routing).
 *
 * @see docs/reference/external-api.md
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { noteRequestError } from './access-log.ts';
import { databaseErrorCode, databaseFailureKind } from './database-errors.ts';
import { dependencyFaults } from './fault-summary.ts';
import {
  AppError,
  ERROR_CODES,
  ERROR_STATUS,
  UsageError,
  type ErrorCode,
  type ErrorDetail,
} from './errors.ts';
import { allowedMethods } from './route-table.ts';
import { validationDetails, type SchemaFailure } from './validation-messages.ts';

/** Largest request body accepted, in bytes (64 KiB); the 413's message states it. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** What each error code means, for the API reference. */
export const ERROR_MEANINGS: Record<ErrorCode, string> = {
  invalid_request:
    'Malformed input: body or query validation (see `details`), both token headers, bad JSON.',
  missing_token: 'No API token was sent (a `WWW-Authenticate` challenge is included).',
  invalid_token:
    'The API token is unknown, malformed, revoked, or a secret replaced by a rotation (after its overlap).',
  token_expired:
    "The API key is past its `expiresAt`; create a new key (or ask the portal's administrator).",
  invalid_signature:
    "A provider webhook's `X-Hub-Signature-256` is missing or wrong (not an API error).",
  insufficient_scope: 'The token lacks a scope this route needs (see `requiredScopes`).',
  ip_not_allowed:
    "The request comes from an address outside the API key's allowed addresses (the list is not named).",
  insufficient_credit:
    "The portal's credit does not cover the message's price (GET /messaging/credit); an " +
    'operator tops it up.',
  not_found: "Unknown route, or a resource that does not exist in the token's portal.",
  method_not_allowed:
    'The path exists but not with this method; the `Allow` header lists the methods it takes.',
  idempotency_conflict:
    'The Idempotency-Key was used in the last 24 hours with a different request.',
  conflict:
    'A unique value is already taken (e.g. a contact phone); `details` names the field and the ' +
    "existing resource's `id`.",
  not_connected:
    'The route needs an active provider connection; connect the business account on /connect.',
  number_not_ready:
    'The sender number is not onboarded yet (its WhatsApp account not subscribed to webhooks, ' +
    'or the number not registered); the message says what is missing. Retry the onboarding on ' +
    '/settings; GET /messaging/numbers shows each number’s `onboarding`.',
  recipient_opted_out: 'The contact opted out of WhatsApp messages (consent `opted_out`).',
  marketing_stopped:
    'The person stopped marketing messages from the sender number in WhatsApp (a marketing template).',
  recipient_needs_phone:
    'WhatsApp sends authentication templates to phone numbers only, and this person is known ' +
    'only by their WhatsApp user id (they wrote with a username).',
  outside_service_window:
    'Free text needs an inbound message from the recipient in the last 24 hours; send an ' +
    'approved template instead.',
  template_not_approved:
    'The template (name and language) is not APPROVED at the provider (pending, rejected, ' +
    'paused or unknown).',
  invalid_template_parameters:
    "The template's parameters do not fit its definition (header kind, body variable count, " +
    'button suffix or code); the message names the component and position, `details` the fields.',
  messaging_limit_reached:
    "A template to a person outside a service window, when the business portfolio's messaging " +
    'limit (distinct people reached by such messages in a moving 24 hours, GET ' +
    '/messaging/numbers `messagingLimitPerDay`) is reached and this person is not among them; ' +
    '`Retry-After` gives the seconds until the person counted longest ago leaves the 24 hours. ' +
    'Nothing is reserved or queued.',
  provider_error: 'The provider failed or refused the call; retry later.',
  media_gone:
    'The provider no longer has this medium (it keeps inbound media for a limited time); ' +
    'ask the person to send it again.',
  media_too_large:
    'An upload is over the limit of its kind (the message names it: images 5 MB, videos and ' +
    'audio 16 MB, documents 100 MB, stickers 100 KB or 500 KB animated); or an inbound medium ' +
    'is larger than this deployment serves (`MESSAGING_MEDIA_MAX_BYTES`).',
  media_checksum_mismatch:
    "The provider's bytes do not match the SHA-256 of the message; nothing was sent. Retry later.",
  provider_timeout: 'The provider did not answer in time; retry later.',
  payload_too_large: "The request body is over the route's limit (64 KiB unless it says).",
  unsupported_media_type:
    'The request body is not `application/json` (or, for an upload, not multipart); or an ' +
    "uploaded file's content is not a type WhatsApp sends.",
  rate_limited: 'Too many requests; wait the `Retry-After` seconds.',
  internal_error: 'Something failed on our side; quote the request id to support.',
  unavailable:
    'Storage is not answering, or the instance is busy (too many requests at once); retry after the `Retry-After` seconds.',
};

/**
 * JSON schema of the envelope (any code), titled `Error`: the OpenAPI document names it
 * `components.schemas.Error` and every error response refers to it.
 */
export const ErrorEnvelopeSchema = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object(
      {
        code: Type.Enum(ERROR_CODES, {
          description: 'Stable; branch on it. Each response lists the codes it can carry.',
        }),
        message: Type.String({ description: 'For people; never parse it, use `code`.' }),
        requestId: Type.String({ description: 'Also in the `X-Request-Id` header.' }),
        details: Type.Optional(
          Type.Array(
            Type.Object(
              {
                field: Type.String({
                  description: 'Where: `body.subject`, `querystring.limit`, `body.tags.2`, …',
                }),
                message: Type.String({ description: 'What is wrong, in words.' }),
                id: Type.Optional(
                  Type.String({
                    description: 'The existing resource holding the value (conflict).',
                  }),
                ),
              },
              { title: 'ErrorDetail' },
            ),
            { description: 'Which input was wrong, and how: every problem found, at once.' },
          ),
        ),
        requiredScopes: Type.Optional(
          Type.Array(Type.String(), { description: 'The scopes the route needs.' }),
        ),
      },
      { title: 'ErrorBody' },
    ),
  },
  { title: 'Error' },
);

/**
 * Route `response` entries for the given error codes: the envelope per HTTP status, its
 * description listing the codes that status carries and what each means.
 */
export function errorResponses(codes: readonly ErrorCode[]): Record<number, TSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<number, TSchema> = {};
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[status] = {
      ...ErrorEnvelopeSchema,
      description: group.map((c) => `\`${c}\`: ${ERROR_MEANINGS[c]}`).join(' '),
    };
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

/** A byte count in words: `64 KiB`, `1 MiB`. */
function sizeInWords(bytes: number): string {
  return bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0
    ? `${bytes / (1024 * 1024)} MiB`
    : `${Math.round(bytes / 1024)} KiB`;
}

/**
 * Map any thrown value to an AppError. Unknown errors become a bare `internal_error`.
 *
 * @param bodyLimit the body limit of the request's route, in bytes, stated by a 413.
 */
export function toAppError(err: unknown, bodyLimit = BODY_LIMIT_BYTES): AppError {
  if (err instanceof AppError) return err;
  // A service's refusal of its input (an unknown portal, a weak password): the message is
  // written for the caller.
  if (err instanceof UsageError)
    return new AppError('invalid_request', err.message, { cause: err });
  const e = err as Partial<FastifyError> & { validation?: SchemaFailure[] };
  if (e.validation) {
    return new AppError('invalid_request', 'The request is not valid; see details.', {
      details: validationDetails(e.validation, e.validationContext ?? ''),
      cause: err,
    });
  }
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(
        'payload_too_large',
        `The request body is over the limit of ${sizeInWords(bodyLimit)}.`,
        { cause: err },
      );
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
 * Install the root error and not-found handlers. The request's one access line carries the
 * error's `code` (and, for a server error, the error with its cause, at level `error`); never
 * the request's content.
 */
export function installErrorHandlers(
  app: FastifyInstance,
  options: {
    /**
     * Answers an unknown route with a page instead of the envelope when it returns a reply
     * (browser/error-pages.tsx decides: a browser, outside `/api/`); platform knows no page.
     */
    notFoundPage?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | null;
  } = {},
): void {
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const error = toAppError(err, request.routeOptions.bodyLimit);
    // Said on the request's one access line (access-log.ts). A dependency that is down is no
    // bug: no stack per refused request, one summary line per interval (fault-summary.ts).
    const unavailable = error.code === 'unavailable';
    if (unavailable) dependencyFaults.note('storage', databaseErrorCode(err), request.log);
    noteRequestError(
      request,
      error.status >= 500 && !unavailable ? { code: error.code, err } : { code: error.code },
    );
    return sendError(reply, error);
  });
  const { notFoundPage } = options;
  const notFound = notFoundPage
    ? (request: FastifyRequest, reply: FastifyReply) =>
        notFoundPage(request, reply) ?? notFoundHandler(request, reply)
    : notFoundHandler;
  app.setNotFoundHandler(notFound);
  // A path parameter matched as the empty string (`GET /support/tickets/` routed to
  // `/support/tickets/:id`) names nothing: the path is unknown, not a parameter to validate.
  // preValidation runs after the API's authentication, as for any unknown route.
  // Callback style, not async: no promise per request, and no allocation for a route without
  // parameters. A hook that answers does not call `done`.
  app.addHook('preValidation', (request, reply, done) => {
    if (hasEmptyParameter(request.params)) return void notFound(request, reply);
    done();
  });
}

/** Whether a path parameter other than a wildcard (`*`, which may be empty) is `''`. */
function hasEmptyParameter(params: unknown): boolean {
  if (params === null || typeof params !== 'object') return false;
  for (const name in params) {
    if (name !== '*' && (params as Record<string, unknown>)[name] === '') return true;
  }
  return false;
}

/**
 * 404 `not_found` for an unknown route. The path is not echoed: a client that put a credential
 * in it would get it back in a response body.
 */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?', 1)[0] ?? '';
  const allow = allowedMethods(request.server.routeTable, path);
  if (allow.length > 0 && !allow.includes(request.method)) {
    return sendError(
      reply,
      new AppError('method_not_allowed', `This path does not take ${request.method}.`, {
        headers: { allow: allow.join(', ') },
      }),
    );
  }
  const slash = path.length > 1 && path.endsWith('/') ? ' (paths do not end with a slash)' : '';
  return sendError(
    reply,
    new AppError('not_found', `No ${request.method} route matches this path${slash}.`),
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
