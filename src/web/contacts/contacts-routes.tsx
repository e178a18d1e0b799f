/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/contacts`: the portal's contacts for signed-in users: search and tag filter, pages, a CSV
 * upload that shows what would fail before the confirmed import writes anything (the same
 * import as `POST /crm/contacts/import`), erasure with a confirmation step, and each contact's
 * page (`/contacts/{id}`, contact-routes.tsx).
 *
 * @see docs/reference/external-api.md "The capability areas"
 */
import fastifyMultipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type, type Static } from 'typebox';
import { flashOf } from '../../browser/flash.tsx';
import { Actions, ButtonLink } from '../../browser/kit.tsx';
import { MessagePage } from '../../browser/message-page.tsx';
import { sendFormExpired } from '../../browser/refusal-pages.tsx';
import { sendPage } from '../../browser/render.ts';
import type { WebSession } from '../../browser/session-store.ts';
import { CSV_MAX_BYTES, contactsFromCsv } from '../../contacts/contact-csv.ts';
import { sortRows } from '../../contacts/contact-import.ts';
import { AppError, UsageError } from '../../platform/errors.ts';
import { ConfirmErasePage, ContactsPage, ImportPreviewPage } from './contacts-page.tsx';
import { contactPageRoutes, sendNoContact } from './contact-routes.tsx';
import { guardPortalArea, signedIn, streamedFormTokenOk } from '../page-area.ts';
import { FormField, HtmlPage, Redirect, type WebRoutesOptions } from '../web-options.ts';

const ListQuery = Type.Object({
  q: FormField(100),
  tag: FormField(50),
  cursor: FormField(200),
  done: FormField(32),
  created: FormField(9),
  updated: FormField(9),
  unchanged: FormField(9),
  failed: FormField(9),
});
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const ConfirmBody = Type.Object({ csrf: FormField(100), csv: FormField(CSV_MAX_BYTES) });
const EraseBody = Type.Object({ csrf: FormField(100), confirm: FormField(10) });
const PAGE_SIZE = 50;

const signedInOf = (s: WebSession) => ({ email: s.email, csrfToken: s.csrfToken });

function sendCannotImport(reply: FastifyReply, session: WebSession, message: string) {
  return sendPage(
    reply,
    <MessagePage title="The file cannot be imported" signedIn={signedInOf(session)}>
      <p class="error">{message}</p>
      <p>Nothing was written.</p>
      <Actions>
        <ButtonLink href="/contacts">Back to contacts</ButtonLink>
      </Actions>
    </MessagePage>,
    400,
  );
}

export async function contactsPages(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const { sessions, contacts } = opts;
  guardPortalArea(app, sessions, { home: '/contacts' });
  await app.register(fastifyMultipart, {
    limits: { fileSize: CSV_MAX_BYTES, files: 1, fields: 4, fieldSize: 200, parts: 5 },
  });

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/contacts',
    { schema: { querystring: ListQuery, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const session = signedIn(request);
      const q = request.query.q?.trim() || undefined;
      const tag = request.query.tag?.trim() || undefined;
      let page;
      try {
        page = await contacts.listContacts(session, {
          limit: PAGE_SIZE,
          q,
          tag,
          cursor: request.query.cursor || undefined,
        });
      } catch (err) {
        if (!(err instanceof AppError) || err.code !== 'invalid_request') throw err;
        page = await contacts.listContacts(session, { limit: PAGE_SIZE, q, tag });
      }
      return sendPage(
        reply,
        <ContactsPage
          signedIn={signedInOf(session)}
          items={page.items}
          nextCursor={page.nextCursor}
          search={{ q, tag }}
          flash={flashOf(request.query)}
        />,
      );
    },
  );

  app.post(
    '/contacts/import',
    {
      // The token is the field before the file, read from the stream.
      config: { page: { streamedCsrf: true } },
      schema: { response: { 200: HtmlPage, 303: Redirect, 400: HtmlPage, 403: HtmlPage } },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const file = await request.file().catch(() => undefined);
      const csrf = file?.fields.csrf;
      const csrfValue = csrf && 'value' in csrf ? String(csrf.value) : undefined;
      if (!streamedFormTokenOk(request, csrfValue)) return sendFormExpired(reply, session);
      if (!file) return sendCannotImport(reply, session, 'Choose a CSV file first.');
      let text: string;
      try {
        text = (await file.toBuffer()).toString('utf8');
      } catch {
        return sendCannotImport(reply, session, 'The file is larger than 1 MiB.');
      }
      let rows: unknown[];
      try {
        rows = contactsFromCsv(text);
      } catch (err) {
        if (err instanceof UsageError) return sendCannotImport(reply, session, err.message);
        throw err;
      }
      const { valid, failed } = sortRows(rows);
      return sendPage(
        reply,
        <ImportPreviewPage
          signedIn={signedInOf(session)}
          fileName={file.filename || 'The file'}
          rows={rows.length}
          ready={valid.length}
          failed={failed}
          csv={text}
        />,
      );
    },
  );

  app.post<{ Body: Static<typeof ConfirmBody> }>(
    '/contacts/import/confirm',
    {
      bodyLimit: 2 * CSV_MAX_BYTES,
      schema: { body: ConfirmBody, response: { 303: Redirect, 400: HtmlPage, 403: HtmlPage } },
    },
    async (request, reply) => {
      const session = signedIn(request);
      let rows: unknown[];
      try {
        rows = contactsFromCsv(request.body.csv ?? '');
      } catch (err) {
        if (err instanceof UsageError) return sendCannotImport(reply, session, err.message);
        throw err;
      }
      const r = await contacts.importContacts(session, rows, 'import');
      request.log.info({ userId: session.userId, rows: rows.length }, 'contacts imported from CSV');
      const counts = {
        done: 'contacts_imported',
        created: String(r.created),
        updated: String(r.updated),
        unchanged: String(r.unchanged),
        failed: String(r.failed.length),
      };
      return reply.redirect(`/contacts?${new URLSearchParams(counts).toString()}`, 303);
    },
  );
  registerErasePages(app, opts);
  contactPageRoutes(app, opts);
}

/** The confirmation page of an erasure, and the erasure. */
function registerErasePages(app: FastifyInstance, { contacts }: WebRoutesOptions): void {
  app.get<{ Params: Static<typeof IdParams> }>(
    '/contacts/:id/delete',
    {
      config: { page: { back: '/contacts' } },
      schema: { params: IdParams, response: { 200: HtmlPage, 302: Redirect, 404: HtmlPage } },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const contact = await contacts.getContact(session, request.params.id).catch(() => null);
      if (!contact) return sendNoContact(reply, session);
      return sendPage(reply, <ConfirmErasePage signedIn={signedInOf(session)} contact={contact} />);
    },
  );

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof EraseBody> }>(
    '/contacts/:id/delete',
    {
      schema: {
        params: IdParams,
        body: EraseBody,
        response: { 303: Redirect, 403: HtmlPage, 404: HtmlPage },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      if (request.body.confirm !== 'yes') {
        return reply.redirect(`/contacts/${encodeURIComponent(request.params.id)}/delete`, 303);
      }
      try {
        await contacts.eraseContact(session, request.params.id, {
          actor: { type: 'user', id: String(session.userId) },
          requestId: request.id,
        });
      } catch (err) {
        if (err instanceof AppError && err.code === 'not_found')
          return sendNoContact(reply, session);
        throw err;
      }
      return reply.redirect('/contacts?done=contact_erased', 303);
    },
  );
}
