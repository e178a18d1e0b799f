/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * Pages that refuse a form: an expired or missing CSRF token, or an action the user may not
 * take. Nothing was changed when either is shown.
 */
import type { FastifyReply } from 'fastify';
import { MessagePage } from './message-page.tsx';
import { sendPage } from './render.ts';
import type { WebSession } from './session-store.ts';

const signedInOf = (session: WebSession | null) =>
  session ? { email: session.email, csrfToken: session.csrfToken } : undefined;

/** 403: the form's CSRF token was missing or wrong. */
export function sendFormExpired(reply: FastifyReply, session: WebSession | null): FastifyReply {
  return sendPage(
    reply,
    <MessagePage title="This form has expired" signedIn={signedInOf(session)}>
      <p>Nothing was changed. Go back, reload the page and try again.</p>
      <p class="actions">
        <a class="button secondary" href="/settings">
          Back to settings
        </a>
      </p>
    </MessagePage>,
    403,
  );
}

/** 403: the signed-in user may not do this. */
export function sendNotAllowed(
  reply: FastifyReply,
  session: WebSession,
  what: string,
): FastifyReply {
  return sendPage(
    reply,
    <MessagePage title="Not allowed" signedIn={signedInOf(session)}>
      <p>{what}</p>
      <p class="actions">
        <a class="button secondary" href="/settings">
          Back to settings
        </a>
      </p>
    </MessagePage>,
    403,
  );
}

/**
 * 503: storage did not answer in time (or at all), so nothing could be read or changed. Sent
 * with `Retry-After` (seconds); the page names no cause (a lock, a timeout) the visitor can act
 * on, and no detail of the failure.
 */
export function sendUnavailable(reply: FastifyReply, retryAfterSeconds = 30): FastifyReply {
  reply.header('retry-after', String(retryAfterSeconds));
  return sendPage(
    reply,
    <MessagePage title="Portico is not answering right now">
      <p>Our storage is busy or unreachable, so nothing was read or changed.</p>
      <p>Try again in a minute. If it keeps happening, tell your administrator.</p>
    </MessagePage>,
    503,
  );
}
