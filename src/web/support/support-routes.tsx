/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/support` for signed-in portal users: list and open tickets, read a thread, reply, close and
 * reopen, through the same tickets service as the API (same redaction, lifecycle and webhooks).
 * An agent's session is not a portal session, so it is sent to `/login` like a visitor.
 *
 * @see docs/support.md "The API"
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Principal } from '../../accounts/principal.ts';
import { sendPage } from '../../browser/render.ts';
import type { WebSession } from '../../browser/session-store.ts';
import { AppError } from '../../platform/errors.ts';
import { hasControlCharacters } from '../../platform/plain-text.ts';
import type { TicketsService } from '../../tickets/tickets-service.ts';
import {
  SupportCloseConfirmPage,
  SupportListPage,
  SupportTicketPage,
  type NewTicketForm,
} from './support-pages.tsx';
import { guardPortalArea, signedIn } from '../page-area.ts';
import { FormField, HtmlPage, Redirect, type WebRoutesOptions } from '../web-options.ts';

const TicketParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const ListQuery = Type.Object({ cursor: FormField(200) });
const NewTicketBody = Type.Object({
  csrf: FormField(100),
  subject: FormField(1000),
  description: FormField(20_000),
  priority: FormField(20),
});
const CommentBody = Type.Object({ csrf: FormField(100), body: FormField(20_000) });
const StatusBody = Type.Object({ csrf: FormField(100), status: FormField(20) });
const CloseBody = Type.Object({ csrf: FormField(100), confirm: FormField(10) });

/** A ticket form's page, where sign-in brings the visitor back. */
const ticketOf = (request: FastifyRequest) =>
  `/support/tickets/${(request.params as Static<typeof TicketParams>).id}`;

const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;

function principalOf(session: WebSession): Principal {
  return {
    portalId: session.portalId,
    portalCode: session.portalCode,
    userId: session.userId,
    isMainAdmin: session.isMainAdmin,
    scopes: [],
  };
}

const signedInOf = (s: WebSession) => ({ email: s.email, csrfToken: s.csrfToken });

/** The words of a refusal a person can fix (too long, empty, a move the lifecycle refuses). */
function refusalWords(err: unknown): string | null {
  return err instanceof AppError && ['conflict', 'invalid_request'].includes(err.code)
    ? err.message
    : null;
}

/** A ticket's page; `refused`: a form's refusal (next to the reply box when `form` is it). */
async function ticketPage(
  tickets: TicketsService,
  reply: FastifyReply,
  session: WebSession,
  id: string,
  refused?: { error: string; replyBody?: string | undefined; status: number },
) {
  const ticket = await tickets.getTicket(session, id);
  const comments = await tickets.listComments(session, id, { limit: 100 });
  const onReply = refused?.replyBody !== undefined;
  return sendPage(
    reply,
    <SupportTicketPage
      signedIn={signedInOf(session)}
      ticket={ticket}
      comments={comments.items}
      error={onReply ? undefined : refused?.error}
      reply={onReply ? { body: refused.replyBody, error: refused.error } : undefined}
    />,
    refused?.status ?? 200,
  );
}

/** The new-ticket form's errors next to their fields (none: it may be sent). */
function newTicketErrors(subject: string, description: string): NewTicketForm['errors'] {
  const errors: NewTicketForm['errors'] = {};
  if (!/\S/.test(subject)) errors.subject = 'Write a subject.';
  else if (hasControlCharacters(subject))
    errors.subject = 'A subject cannot hold control or text-direction characters.';
  else if (subject.length > 200) errors.subject = 'A subject is up to 200 characters.';
  if (!/\S/.test(description)) errors.description = 'Describe what happened.';
  else if (description.length > 10_000)
    errors.description = 'A description is up to 10,000 characters.';
  return errors;
}
export async function supportPages(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  guardPortalArea(app, opts.sessions, { home: '/support' });
  const tickets: TicketsService = opts.tickets;

  async function listPage(
    reply: FastifyReply,
    session: WebSession,
    cursor?: string,
    refused?: { form: NewTicketForm; error?: string | undefined; status: number },
  ) {
    const page = await tickets.listTickets(session, { limit: 20, cursor });
    const nextHref = page.nextCursor
      ? `/support?${new URLSearchParams({ cursor: page.nextCursor }).toString()}`
      : null;
    return sendPage(
      reply,
      <SupportListPage
        signedIn={signedInOf(session)}
        items={page.items}
        nextHref={nextHref}
        form={refused?.form}
        error={refused?.error}
      />,
      refused?.status ?? 200,
    );
  }

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/support',
    { schema: { querystring: ListQuery, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const session = signedIn(request);
      return listPage(reply, session, request.query.cursor || undefined);
    },
  );

  app.post<{ Body: Static<typeof NewTicketBody> }>(
    '/support/tickets',
    {
      schema: {
        body: NewTicketBody,
        response: { 303: Redirect, 302: Redirect, 400: HtmlPage, 403: HtmlPage, 409: HtmlPage },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const { subject = '', description = '' } = request.body;
      const priority = PRIORITIES.find((p) => p === request.body.priority) ?? 'normal';
      const errors = newTicketErrors(subject, description);
      const form = { subject, description, priority, errors };
      if (Object.keys(errors).length > 0)
        return listPage(reply, session, undefined, { form, status: 400 });
      let created;
      try {
        created = await tickets.createTicket({
          principal: principalOf(session),
          input: { subject, description, priority },
          requestId: request.id,
        });
      } catch (err) {
        const words = refusalWords(err);
        if (words && err instanceof AppError)
          return listPage(reply, session, undefined, { form, error: words, status: err.status });
        throw err;
      }
      return reply.redirect(`/support/tickets/${created.body.data.id}`, 303);
    },
  );

  app.get<{ Params: Static<typeof TicketParams> }>(
    '/support/tickets/:id',
    { schema: { params: TicketParams, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const session = signedIn(request);
      return ticketPage(tickets, reply, session, request.params.id);
    },
  );

  supportTicketForms(app, opts);
  supportCloseForm(app, opts);
}

/** The forms of a ticket's page: reply, close (after its confirmation step) or reopen. */
function supportTicketForms(app: FastifyInstance, opts: WebRoutesOptions): void {
  const tickets: TicketsService = opts.tickets;
  app.post<{ Params: Static<typeof TicketParams>; Body: Static<typeof CommentBody> }>(
    '/support/tickets/:id/comments',
    {
      config: { page: { back: ticketOf } },
      schema: {
        params: TicketParams,
        body: CommentBody,
        response: { 303: Redirect, 302: Redirect, 400: HtmlPage, 403: HtmlPage, 409: HtmlPage },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const session = signedIn(request);
      const body = request.body.body ?? '';
      if (!/\S/.test(body) || body.length > 10_000) {
        const error = /\S/.test(body)
          ? 'A reply is up to 10,000 characters.'
          : 'Write your reply first.';
        return ticketPage(tickets, reply, session, id, { error, replyBody: body, status: 400 });
      }
      try {
        await tickets.addComment({
          principal: principalOf(session),
          ticketId: id,
          body,
          requestId: request.id,
        });
      } catch (err) {
        const words = refusalWords(err);
        if (words && err instanceof AppError)
          return ticketPage(tickets, reply, session, id, {
            error: words,
            replyBody: body,
            status: err.status,
          });
        throw err;
      }
      return reply.redirect(`/support/tickets/${id}`, 303);
    },
  );

  app.post<{ Params: Static<typeof TicketParams>; Body: Static<typeof StatusBody> }>(
    '/support/tickets/:id/status',
    {
      config: { page: { back: ticketOf } },
      schema: {
        params: TicketParams,
        body: StatusBody,
        response: {
          200: HtmlPage,
          303: Redirect,
          302: Redirect,
          400: HtmlPage,
          403: HtmlPage,
          409: HtmlPage,
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const session = signedIn(request);
      if (request.body.status === 'closed') {
        const ticket = await tickets.getTicket(session, id);
        return sendPage(
          reply,
          <SupportCloseConfirmPage signedIn={signedInOf(session)} ticket={ticket} />,
        );
      }
      const status = request.body.status === 'open' ? request.body.status : null;
      if (!status)
        return ticketPage(tickets, reply, session, id, {
          error: 'Choose to close or to reopen the ticket.',
          status: 400,
        });
      try {
        await tickets.updateTicket(session, id, { status });
      } catch (err) {
        const words = refusalWords(err);
        if (words && err instanceof AppError)
          return ticketPage(tickets, reply, session, id, { error: words, status: err.status });
        throw err;
      }
      return reply.redirect(`/support/tickets/${id}`, 303);
    },
  );
}

/** Closing a ticket: the kit's confirmation step, then the change. */
function supportCloseForm(app: FastifyInstance, opts: WebRoutesOptions): void {
  const tickets: TicketsService = opts.tickets;
  app.post<{ Params: Static<typeof TicketParams>; Body: Static<typeof CloseBody> }>(
    '/support/tickets/:id/close',
    {
      config: { page: { back: ticketOf } },
      schema: {
        params: TicketParams,
        body: CloseBody,
        response: { 200: HtmlPage, 303: Redirect, 302: Redirect, 403: HtmlPage, 409: HtmlPage },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const session = signedIn(request);
      if (request.body.confirm !== 'yes') {
        const ticket = await tickets.getTicket(session, id);
        return sendPage(
          reply,
          <SupportCloseConfirmPage signedIn={signedInOf(session)} ticket={ticket} />,
        );
      }
      try {
        await tickets.updateTicket(session, id, { status: 'closed' });
      } catch (err) {
        const words = refusalWords(err);
        if (words && err instanceof AppError)
          return ticketPage(tickets, reply, session, id, { error: words, status: err.status });
        throw err;
      }
      return reply.redirect(`/support/tickets/${id}`, 303);
    },
  );
}
