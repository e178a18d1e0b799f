/**
 * The external API, mounted at `/api/v1/external`. Every route under it, the unknown ones
 * included, passes the authentication hook first (only a route marked `config.public`, the
 * OpenAPI document, is reachable without a token); routes declare the scopes they need in
 * `config.requiredScopes`. Bodies are JSON only (anything else is 415) and at most the app's
 * body limit (413).
 *
 * @see docs/reference/external-api.md
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify';
import fastifyCompress from '@fastify/compress';
import { RESPONSE_COMPRESSION } from '../platform/cached-body.ts';
import type { Admission, AdmissionRefusal } from '../platform/admission.ts';
import { notFoundHandler } from '../platform/error-envelope.ts';
import { AppError } from '../platform/errors.ts';
import { jsonBodyParser } from '../platform/json-body.ts';
import type { KeyUsage } from '../accounts/key-usage.ts';
import type { KeyPrincipal, PrincipalLookup } from '../accounts/principal.ts';
import { invalidToken, keyRefusal, presentedTokenHash, requireScopes } from './authenticate.ts';
import { openApiDocumentRoute } from './openapi.ts';
import { createApiRateLimits, type RateLimitSettings } from './rate-limits.ts';
import '../api-kit/request-principal.ts';
import { verifyRoute } from './verify-route.ts';

export const EXTERNAL_API_PREFIX = '/api/v1/external';

export interface ExternalApiOptions {
  lookupPrincipal: PrincipalLookup;
  /** The principal of a token hash when known without I/O (the verification cache), else undefined. */
  cachedPrincipal?: (tokenHash: string) => KeyPrincipal | undefined;
  rateLimits: RateLimitSettings;
  /** Usage per key and the audit of refused keys, both batched off the request's path. */
  keyUsage?: Pick<KeyUsage, 'record' | 'refused'>;
  /**
   * Admission in front of every request but the public ones: a request over its bounds is
   * answered 503 `unavailable` with `Retry-After` before any other work (platform/admission.ts).
   */
  admission?: Admission;
  /** Feature route plugins mounted under the API base (tickets, ...). */
  routes?: ((api: FastifyInstance) => Promise<void>)[];
}

/** `requireScopes` as a value: the refusal, or undefined when the principal has the scopes. */
function scopeError(
  principal: KeyPrincipal,
  required: readonly string[] | undefined,
): Error | undefined {
  if (!required) return undefined;
  try {
    requireScopes(principal, required);
    return undefined;
  } catch (err) {
    return err as Error;
  }
}

/**
 * What an admission refusal answers: 503 `unavailable`, `Retry-After` 1 s (AppError adds it),
 * the cause's code (`ADMISSION_QUEUE_FULL` or `ADMISSION_WAIT_TIMEOUT`) counted in the storage
 * fault summary (one log line per interval, not one per refusal).
 */
function admissionRefusal(why: AdmissionRefusal): AppError {
  return new AppError('unavailable', 'The service is busy; retry after `Retry-After` seconds.', {
    cause: why === 'queue_full' ? QUEUE_FULL : WAIT_TIMEOUT,
  });
}

// Shared causes: a refusal builds no stack of its own.
const QUEUE_FULL = Object.freeze({ code: 'ADMISSION_QUEUE_FULL' });
const WAIT_TIMEOUT = Object.freeze({ code: 'ADMISSION_WAIT_TIMEOUT' });

export async function externalApi(
  api: FastifyInstance,
  options: ExternalApiOptions,
): Promise<void> {
  api.decorateRequest('principal', null);

  // JSON is the only body the API reads: without a parser for them, other media types (text,
  // forms registered elsewhere in the app) are refused with 415 `unsupported_media_type`.
  api.removeAllContentTypeParsers();
  api.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser(api));

  const limits = createApiRateLimits(options.rateLimits);
  api.addHook('onClose', () => limits.close());

  /** Keys refused for their own rules (expired, address): counted in their usage too. */
  const refusedKeys = new WeakMap<FastifyRequest, number>();

  /**
   * A request that presented a known secret: the key's rules (secret overlap, expiry, allowed
   * addresses, from the principal: no I/O), then its rate limit, then the route's scopes.
   */
  const admit = (
    request: FastifyRequest,
    reply: FastifyReply,
    principal: KeyPrincipal,
    done: HookHandlerDoneFunction,
  ): void => {
    const refusal = keyRefusal(principal, request.ip, Date.now());
    if (refusal) {
      if (refusal.audit) {
        refusedKeys.set(request, principal.keyId);
        options.keyUsage?.refused(principal, refusal.audit, request.ip, request.id);
      }
      return refuse(request, refusal.error, done);
    }
    request.principal = principal;
    const scopes = request.routeOptions.config.requiredScopes;
    const counting = limits.countKeyRequest(reply, principal.keyId, principal.rateLimitPerMinute);
    if (counting) {
      counting.then(() => done(scopeError(principal, scopes)), done);
    } else {
      done(scopeError(principal, scopes));
    }
  };

  /**
   * A failed authentication. The failure budget is consulted only after a failure: a valid
   * token is never refused by the failures of others behind the same address
   * (docs/decisions/0004-rate-limits.md).
   */
  const refuse = (request: FastifyRequest, err: unknown, done: HookHandlerDoneFunction): void => {
    if (err instanceof AppError && err.status === 401) {
      limits.countFailure(request).then(() => done(err), done);
    } else {
      done(err as Error);
    }
  };

  // First of all, admission: a request refused here has done nothing (no token lookup, no body
  // read); an admitted one holds its slot until its answer is finished or its client has gone.
  const admission = options.admission;
  if (admission)
    api.addHook('onRequest', (request, reply, done) => {
      if (request.routeOptions.config.public) return done();
      admission.enter(
        (release) => {
          reply.raw.once('close', release);
          done();
        },
        (why) => {
          reply.header('x-content-type-options', 'nosniff');
          done(admissionRefusal(why));
        },
      );
    });

  // Callback style, and no promise at all for a token the cache holds (most requests): this
  // hook runs on every API request. The pages' security headers (helmet, in the pages' own
  // context) are for HTML; a JSON API needs only `nosniff`, set here so that every answer of
  // this context carries it, refusals included.
  api.addHook('onRequest', (request, reply, done) => {
    reply.header('x-content-type-options', 'nosniff');
    if (request.routeOptions.config.public) return done();
    let tokenHash: string;
    try {
      tokenHash = presentedTokenHash(request.headers);
    } catch (err) {
      return refuse(request, err, done);
    }
    const cached = options.cachedPrincipal?.(tokenHash);
    if (cached) return admit(request, reply, cached, done);
    options
      .lookupPrincipal(tokenHash)
      .then(
        (principal) =>
          principal
            ? admit(request, reply, principal, done)
            : refuse(request, invalidToken(), done),
        done,
      );
  });

  // Usage per key: a count in memory per answered request (written in batches by key-usage.ts).
  const usage = options.keyUsage;
  if (usage) {
    api.addHook('onResponse', (request, reply, done) => {
      const keyId = request.principal?.keyId ?? refusedKeys.get(request);
      if (keyId !== undefined) {
        const route = request.routeOptions.url;
        const operation = route === undefined ? 'unknown route' : `${request.method} ${route}`;
        usage.record(keyId, operation, reply.statusCode, request.ip);
      }
      done();
    });
  }

  api.setNotFoundHandler(notFoundHandler);

  // JSON answers of 1 KiB or more are compressed for a client that accepts `br` or `gzip`
  // (docs/decisions/0041-compressed-cached-reference.md). Before the routes: the plugin hooks
  // the routes registered after it.
  await api.register(fastifyCompress, RESPONSE_COMPRESSION);
  await api.register(openApiDocumentRoute);
  await api.register(verifyRoute);
  for (const routes of options.routes ?? []) await api.register(routes);
}
