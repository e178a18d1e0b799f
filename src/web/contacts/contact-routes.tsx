/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/contacts/{id}`: a contact's page (contact-page.tsx) and its three forms, registered in the
 * contacts page area (its guard checks the session and every form's CSRF token):
 *
 * - `POST /contacts/{id}`: names, phone, email and tags, as `PATCH /crm/contacts/{id}` takes
 *   them (the same schema, the same service; an empty field clears it);
 * - `POST /contacts/{id}/attributes`: the attributes' values, one new attribute, an emptied
 *   value removes its attribute (a merge patch of `attributes`);
 * - `POST /contacts/{id}/send`: an approved template to the contact, through the composer's
 *   send (message-composer.ts: the same checks and errors as `POST /messaging/messages`).
 *
 * A form with bad input comes back with each error next to its field, what was typed kept, and
 * nothing changed. An unknown id, or another portal's, is the 404 page. The person's data is
 * posted, never put in a URL; a redirect carries the contact id and a fixed flash key only.
 *
 * @see docs/decisions/0066-contact-page.md
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { flashOf } from '../../browser/flash.tsx';
import { Actions, ButtonLink } from '../../browser/kit.tsx';
import { MessagePage } from '../../browser/message-page.tsx';
import { sendPage } from '../../browser/render.ts';
import type { WebSession } from '../../browser/session-store.ts';
import type { ContactDetail, PatchContactBody } from '../../contacts/contact-schemas.ts';
import { patchFailures } from '../../contacts/contact-validation.ts';
import {
  TEMPLATE_PARAMETER_MAX,
  TEMPLATE_PARAMETERS_MAX,
} from '../../messaging/store/messages-schemas.ts';
import { toAppError } from '../../platform/error-envelope.ts';
import { AppError } from '../../platform/errors.ts';
import {
  chosenTemplate,
  composerTemplates,
  formErrors,
  IDEMPOTENCY_KEY,
  newIdempotencyKey,
  placeRefusal,
  sendBodyOf,
  type ComposerForm,
  type ComposerSource,
  type ComposerView,
} from '../message-composer.ts';
import { signedIn } from '../page-area.ts';
import { FormField, HtmlPage, Redirect, type WebRoutesOptions } from '../web-options.ts';
import {
  attributeText,
  ContactPage,
  detailsOf,
  type AttributeRow,
  type ContactPageProps,
  type DetailsForm,
  type FormState,
} from './contact-page.tsx';
import { CONVERSATIONS_SHOWN, contactConversations } from './contact-page-data.ts';

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
type Id = Static<typeof IdParams>;
const PageQuery = Type.Object({ done: FormField(32), template: FormField(64) });
const DetailsBody = Type.Object({
  csrf: FormField(100),
  firstName: FormField(200),
  lastName: FormField(200),
  phone: FormField(100),
  email: FormField(400),
  tags: FormField(2000),
});
const Many = (maxLength: number) =>
  Type.Optional(
    Type.Union([
      Type.String({ maxLength }),
      Type.Array(Type.String({ maxLength }), { maxItems: 60 }),
    ]),
  );
const AttributesBody = Type.Object({ csrf: FormField(100), key: Many(100), value: Many(1000) });
const Parameter = Type.String({ maxLength: TEMPLATE_PARAMETER_MAX });
const SendBody = Type.Object({
  csrf: FormField(100),
  compose: FormField(64),
  key: FormField(64),
  from: FormField(64),
  parameter: Type.Optional(
    Type.Union([Parameter, Type.Array(Parameter, { maxItems: TEMPLATE_PARAMETERS_MAX })]),
  ),
});
const PAGE = { 200: HtmlPage, 302: Redirect, 404: HtmlPage };
const FORM = {
  303: Redirect,
  400: HtmlPage,
  402: HtmlPage,
  403: HtmlPage,
  404: HtmlPage,
  409: HtmlPage,
  422: HtmlPage,
  502: HtmlPage,
  504: HtmlPage,
};
/** How many support tickets naming the person the page lists. */
const TICKETS_SHOWN = 10;

const signedInOf = (s: WebSession) => ({ email: s.email, csrfToken: s.csrfToken });
const list = (v: string | string[] | undefined): string[] =>
  v === undefined ? [] : Array.isArray(v) ? v : [v];

/** The 404 page of a contact that is not the portal's (or no longer exists). */
export function sendNoContact(reply: FastifyReply, session: WebSession) {
  return sendPage(
    reply,
    <MessagePage title="No such contact" signedIn={signedInOf(session)}>
      <p>This contact does not exist (it may have been deleted already).</p>
      <Actions>
        <ButtonLink href="/contacts">Back to contacts</ButtonLink>
      </Actions>
    </MessagePage>,
    404,
  );
}

/** The contact of the portal, or null (unknown, another portal's, erased). */
async function contactOrNull(opts: WebRoutesOptions, session: WebSession, id: string) {
  try {
    return await opts.contacts.getContact(session, id);
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_found') return null;
    throw err;
  }
}

/** The account's numbers and approved templates, or why there are none (logged by code). */
async function composerSource(
  opts: WebRoutesOptions,
  portalId: number,
  log: FastifyRequest['log'],
): Promise<ComposerSource> {
  try {
    const numbers = await opts.messaging.provider.numbers(portalId);
    const templates = await opts.messaging.provider.templates(portalId);
    return {
      kind: 'ready',
      numbers,
      templates: composerTemplates(templates, numbers),
      contacts: [],
    };
  } catch (err) {
    const e = toAppError(err);
    if (e.code === 'not_connected') return { kind: 'not_connected' };
    if (e.code === 'internal_error') log.error({ err }, '/contacts/:id: the account failed');
    else log.warn({ code: e.code }, '/contacts/:id: the account is unavailable');
    const message = e.code === 'internal_error' ? 'The account could not be read.' : e.message;
    return { kind: 'unavailable', message };
  }
}

/** What a page render may carry from a refused form. */
interface Refused {
  details?: FormState<DetailsForm>;
  attributes?: ContactPageProps['attributes'];
  composer?: Omit<ComposerView, 'source' | 'idempotencyKey'>;
  source?: ComposerSource;
  status: number;
}

function storedAttributes(c: ContactDetail): ContactPageProps['attributes'] {
  const rows = Object.entries(c.attributes).map(([key, v]) => ({ key, value: attributeText(v) }));
  return { values: { rows, newKey: '', newValue: '' }, errors: {} };
}

async function renderContact(
  opts: WebRoutesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  contact: ContactDetail,
  refused?: Refused,
) {
  const session = signedIn(request);
  const portalId = session.portalId;
  const query = (request.query ?? {}) as Static<typeof PageQuery>;
  const [ids, tickets, source] = await Promise.all([
    opts.contactConversationIds(portalId, contact.id, CONVERSATIONS_SHOWN),
    opts.tickets.ticketsNaming({ ...contact, portalId }, TICKETS_SHOWN),
    refused?.source ?? composerSource(opts, portalId, request.log),
  ]);
  const conversations = await contactConversations(opts.inbox, ids, {
    portalId,
    readerId: session.userId,
  });
  const templates = source.kind === 'ready' ? source.templates : [];
  const view: ComposerView = {
    source,
    template: chosenTemplate(templates, query.template) ?? templates[0] ?? null,
    form: { parameters: [] },
    errors: {},
    ...refused?.composer,
    idempotencyKey: newIdempotencyKey(),
  };
  const numbers = source.kind === 'ready' ? source.numbers : [];
  return sendPage(
    reply,
    <ContactPage
      signedIn={signedInOf(session)}
      contact={contact}
      flash={refused ? null : flashOf(query)}
      details={refused?.details ?? { values: detailsOf(contact), errors: {} }}
      attributes={refused?.attributes ?? storedAttributes(contact)}
      conversations={conversations}
      numberNames={new Map(numbers.map((n) => [n.id, n.displayPhoneNumber]))}
      tickets={tickets}
      start={
        contact.consent.whatsapp === 'opted_out'
          ? { kind: 'opted_out' }
          : { kind: 'composer', view }
      }
      now={new Date()}
    />,
    refused?.status ?? 200,
  );
}

const FIELD_WORDS: Record<string, string> = {
  firstName: 'The first name',
  lastName: 'The last name',
  phone: 'The phone',
  email: 'The email',
  tags: 'The tags',
};

/** The merge patch of the details form, and what is wrong with it before the service sees it. */
function detailsPatch(
  contact: ContactDetail,
  form: DetailsForm,
): { patch: PatchContactBody; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const orNull = (v: string) => (v.trim() === '' ? null : v.trim());
  const tags = form.tags
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const patch: PatchContactBody = {
    firstName: orNull(form.firstName),
    lastName: orNull(form.lastName),
    email: orNull(form.email),
    tags: tags.length > 0 ? tags : null,
  };
  const phone = form.phone.trim();
  if (phone !== '') patch.phone = phone;
  else if (contact.phone !== null)
    errors.phone = 'The phone cannot be removed; type the new one instead.';
  for (const d of patchFailures(patch)) {
    const field = d.field.split('.')[0] ?? d.field;
    errors[field] ??= `${FIELD_WORDS[field] ?? 'This field'} ${d.message}.`;
  }
  return { patch, errors };
}

/** An attribute's new value typed as the stored one was (a number stays a number). */
function typedLike(stored: string | number | boolean | undefined, text: string) {
  if (typeof stored === 'number' && text.trim() !== '' && Number.isFinite(Number(text)))
    return Number(text);
  if (typeof stored === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}

/** The merge patch of the attributes form (only what changed), and what is wrong with it. */
function attributesPatch(contact: ContactDetail, keys: string[], values: string[]) {
  const stored = contact.attributes;
  const errors: Record<string, string> = {};
  const changes: Record<string, string | number | boolean | null> = {};
  const rows: AttributeRow[] = [];
  let newKey = '';
  let newValue = '';
  const seen = new Set<string>();
  keys.forEach((rawKey, i) => {
    const key = rawKey.trim();
    const value = values[i] ?? '';
    const isNew = !Object.hasOwn(stored, key) || seen.has(key);
    if (isNew) {
      newKey = rawKey;
      newValue = value;
      if (key === '' && value.trim() === '') return;
      if (key === '') errors['new-key'] = 'Give the new attribute a name.';
      else if (seen.has(key)) errors['new-key'] = 'This attribute exists: change its value above.';
      else if (value.trim() === '') errors['new-value'] = 'Give the new attribute a value.';
      else changes[key] = value.trim();
      return;
    }
    seen.add(key);
    rows.push({ key, value });
    const before = stored[key]!;
    if (value.trim() === '') changes[key] = null;
    else if (value.trim() !== attributeText(before)) changes[key] = typedLike(before, value.trim());
  });
  const patch: PatchContactBody = { attributes: changes };
  for (const d of patchFailures(patch)) {
    const key = d.field.replace(/^attributes\.?/, '');
    const known = Object.hasOwn(stored, key) && !errors[key];
    if (known) errors[key] = `This value ${d.message}.`;
    else if (/keys must match/.test(d.message))
      errors['new-key'] ??= 'A name starts with a letter, then letters, digits or _ (up to 40).';
    else errors['new-value'] ??= `This value ${d.message}.`;
  }
  return { patch, errors, form: { values: { rows, newKey, newValue }, errors } };
}

/** Register `/contacts/{id}` and its forms in the contacts page area. */
export function contactPageRoutes(app: FastifyInstance, opts: WebRoutesOptions): void {
  const { contacts } = opts;

  app.get<{ Params: Id; Querystring: Static<typeof PageQuery> }>(
    '/contacts/:id',
    { schema: { params: IdParams, querystring: PageQuery, response: PAGE } },
    async (request, reply) => {
      const session = signedIn(request);
      const contact = await contactOrNull(opts, session, request.params.id);
      if (!contact) return sendNoContact(reply, session);
      return renderContact(opts, request, reply, contact);
    },
  );

  app.post<{ Params: Id; Body: Static<typeof DetailsBody> }>(
    '/contacts/:id',
    { schema: { params: IdParams, body: DetailsBody, response: FORM } },
    async (request, reply) => {
      const session = signedIn(request);
      const contact = await contactOrNull(opts, session, request.params.id);
      if (!contact) return sendNoContact(reply, session);
      const b = request.body;
      const values: DetailsForm = {
        firstName: b.firstName ?? '',
        lastName: b.lastName ?? '',
        phone: b.phone ?? '',
        email: b.email ?? '',
        tags: b.tags ?? '',
      };
      const { patch, errors } = detailsPatch(contact, values);
      const back = (e: Record<string, string>, status: number) =>
        renderContact(opts, request, reply, contact, { details: { values, errors: e }, status });
      if (Object.keys(errors).length > 0) return back(errors, 400);
      try {
        await contacts.patchContact(session, contact.id, patch);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        if (err.code === 'not_found') return sendNoContact(reply, session);
        if (err.code === 'conflict') return back({ phone: 'Another contact has this phone.' }, 409);
        if (err.code !== 'invalid_request') throw err;
        const d = err.details?.[0];
        return back({ phone: `The phone ${d?.message ?? 'is not valid'}.` }, 400);
      }
      return reply.redirect(`/contacts/${contact.id}?done=contact_saved#details`, 303);
    },
  );

  app.post<{ Params: Id; Body: Static<typeof AttributesBody> }>(
    '/contacts/:id/attributes',
    { schema: { params: IdParams, body: AttributesBody, response: FORM } },
    async (request, reply) => {
      const session = signedIn(request);
      const contact = await contactOrNull(opts, session, request.params.id);
      if (!contact) return sendNoContact(reply, session);
      const { patch, errors, form } = attributesPatch(
        contact,
        list(request.body.key),
        list(request.body.value),
      );
      const back = (attributes: ContactPageProps['attributes'], status: number) =>
        renderContact(opts, request, reply, contact, { attributes, status });
      if (Object.keys(errors).length > 0) return back(form, 400);
      try {
        if (Object.keys(patch.attributes ?? {}).length > 0)
          await contacts.patchContact(session, contact.id, patch);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        if (err.code === 'not_found') return sendNoContact(reply, session);
        if (err.code !== 'invalid_request') throw err;
        const words = err.details?.[0]?.message ?? err.message;
        return back({ ...form, formError: `The attributes ${words}.` }, 400);
      }
      return reply.redirect(`/contacts/${contact.id}?done=attributes_saved#attributes`, 303);
    },
  );

  app.post<{ Params: Id; Body: Static<typeof SendBody> }>(
    '/contacts/:id/send',
    { schema: { params: IdParams, body: SendBody, response: FORM } },
    async (request, reply) => {
      const session = signedIn(request);
      const contact = await contactOrNull(opts, session, request.params.id);
      if (!contact) return sendNoContact(reply, session);
      const b = request.body;
      const form: ComposerForm = {
        from: b.from,
        contactId: contact.id,
        parameters: list(b.parameter),
      };
      const source = await composerSource(opts, session.portalId, request.log);
      type Back = Omit<ComposerView, 'source' | 'idempotencyKey'>;
      const back = (composer: Back, status: number) =>
        renderContact(opts, request, reply, contact, { composer, source, status });
      if (source.kind !== 'ready') return back({ template: null, form, errors: {} }, 409);
      const template = chosenTemplate(source.templates, b.compose);
      if (!template) {
        const words = 'This template is no longer approved in the account; choose another.';
        return back({ template: null, form, errors: { compose: words } }, 422);
      }
      const errors = formErrors(template, form);
      if (Object.keys(errors).length > 0) return back({ template, form, errors }, 400);
      try {
        await opts.messaging.send.sendMessage({
          principal: { portalId: session.portalId },
          input: sendBodyOf(template, form),
          idempotencyKey: b.key && IDEMPOTENCY_KEY.test(b.key) ? b.key : undefined,
          requestId: request.id,
        });
      } catch (err) {
        const placed = placeRefusal(err, form);
        if (!placed) throw err;
        const onForm =
          placed.field === 'from' ||
          placed.field === 'compose' ||
          placed.field?.startsWith('parameter-');
        return onForm && placed.field
          ? back({ template, form, errors: { [placed.field]: placed.words } }, placed.status)
          : back({ template, form, errors: {}, formError: placed.words }, placed.status);
      }
      return reply.redirect(`/contacts/${contact.id}?done=contact_message_sent#conversations`, 303);
    },
  );
}
