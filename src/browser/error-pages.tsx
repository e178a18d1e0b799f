/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * Errors of the pages are pages: a 404 for an unknown address a browser opens, and a 400, 500
 * or 503 for a page route that fails, each in the site's layout with a way on. The external
 * API keeps its JSON envelope (platform/error-envelope.ts); `wantsErrorPage` draws the line.
 *
 * Invariant: nothing from the request (its path, query or body) and nothing of the error
 * (message, stack) is shown; a 500 shows only its request id, to quote to support.
 *
 * @see docs/decisions/0009-pages.md
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { noteRequestError } from '../platform/access-log.ts';
import { toAppError } from '../platform/error-envelope.ts';
import { MessagePage } from './message-page.tsx';
import { sendUnavailable } from './refusal-pages.tsx';
import { sendPage } from './render.ts';

/**
 * Whether an error for this request should be a page rather than the JSON envelope: a browser
 * asks for HTML (`Accept` names `text/html`) and the path is outside `/api/` (the external API
 * and the partner flow's endpoints answer in JSON whatever they are asked).
 */
export function wantsErrorPage(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return (
    typeof accept === 'string' && accept.includes('text/html') && !request.url.startsWith('/api/')
  );
}

/** 404: no page at this address. The address is not echoed. */
export function sendNotFoundPage(reply: FastifyReply): FastifyReply {
  noteRequestError(reply.request, { code: 'not_found' });
  return sendPage(
    reply,
    <MessagePage title="Page not found">
      <p>There is no page at this address. It may have moved, or the link may be mistyped.</p>
      <p class="actions">
        <a class="button" href="/settings">
          Go to settings
        </a>
        <a class="button secondary" href="/login">
          Sign in
        </a>
      </p>
    </MessagePage>,
    404,
  );
}

/**
 * The error handler of the page routes: 503 `unavailable` → the storage page, other server
 * errors → a 500 page naming the request id, `not_found` (another portal's record or none) → the
 * 404 page, other client errors (a mangled query or form) → a 400 page. One access line records
 * it (with the error for a 5xx).
 */
export function pageErrorHandler(
  err: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const error = toAppError(err);
  noteRequestError(request, error.status >= 500 ? { code: error.code, err } : { code: error.code });
  if (error.code === 'unavailable') return sendUnavailable(reply);
  // A record of another portal, or none (a feature's `not_found`): the page does not exist.
  if (error.status === 404) return sendNotFoundPage(reply);
  if (error.status >= 500) {
    return sendPage(
      reply,
      <MessagePage title="Something went wrong on our side">
        <p>Nothing you did caused this, and it has been logged. Please try again in a moment.</p>
        <p class="muted">
          If it keeps happening, tell support this reference:{' '}
          <code data-testid="request-id">{request.id}</code>
        </p>
        <p class="actions">
          <a class="button" href="/settings">
            Back to settings
          </a>
        </p>
      </MessagePage>,
      500,
    );
  }
  return sendPage(
    reply,
    <MessagePage title="This request could not be read">
      <p>The address or the form sent was not in the expected shape, so nothing was changed.</p>
      <p class="actions">
        <a class="button" href="/settings">
          Back to settings
        </a>
      </p>
    </MessagePage>,
    error.status === 429 ? 429 : 400,
  );
}
