/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/settings/keys`: the portal's API keys, for the administrators only, through the service
 * the API's `/keys` and the CLI's `key` commands use. Creating and rotating are CSRF-checked
 * forms whose new secret travels POST → 303 → GET, kept server-side in the session for one read
 * (never in a URL); rotating and revoking go through a confirmation step (rotating chooses its
 * overlap there, up to 24 hours). A refusal comes back as the page with the error and what was
 * typed (400; 404 for a key of no portal or another), nothing changed.
 *
 * @see docs/how-to/restrict-an-api-key.md
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { MAX_ROTATION_OVERLAP_S } from '../../../accounts/api-keys-service.ts';
import { flashOf } from '../../../browser/flash.tsx';
import { sendPage } from '../../../browser/render.ts';
import type { WebSession } from '../../../browser/session-store.ts';
import { UsageError } from '../../../platform/errors.ts';
import {
  ApiKeysPage,
  ConfirmRevokePage,
  ConfirmRotatePage,
  type ApiKeysPageProps,
  type KeyForm,
} from './api-keys-page.tsx';
import {
  FormField,
  HtmlPage,
  adminChange,
  Redirect,
  type WebRoutesOptions,
} from '../../web-options.ts';
import { guardPortalArea, signedIn } from '../../page-area.ts';

const NOT_ADMIN = 'Only an administrator of the portal can manage API keys.';
/** Days of usage the page charts. */
const USAGE_DAYS = 30;

const Query = Type.Object({ done: FormField(32), key: FormField(12) });
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 20 }) });

/** A key id of the path: digits, else no key (404, as for another portal's). */
function keyIdOf(request: FastifyRequest): number {
  const raw = (request.params as Static<typeof IdParams>).id;
  const id = /^\d{1,10}$/.test(raw) ? Number(raw) : 0;
  if (id < 1 || id > 2_147_483_647) throw new UsageError('No API key with this id.', 'not_found');
  return id;
}
const CreateBody = Type.Object({
  csrf: FormField(100),
  name: FormField(1000),
  scopes: Type.Optional(
    Type.Union([
      Type.String({ maxLength: 100 }),
      Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 }),
    ]),
  ),
  expiresOn: FormField(40),
  allowedIps: FormField(4000),
});
const RotateBody = Type.Object({
  csrf: FormField(100),
  confirm: FormField(10),
  overlap: FormField(10),
});
const ConfirmBody = Type.Object({ csrf: FormField(100), confirm: FormField(10) });
const PageResponses = { 200: HtmlPage, 303: Redirect, 400: HtmlPage, 403: HtmlPage, 404: HtmlPage };

type Keys = WebRoutesOptions['apiKeys'];

const actorOf = (session: WebSession) => ({ type: 'user' as const, id: String(session.userId) });

/** The create form's fields as typed. */
function formOf(body: Static<typeof CreateBody>): KeyForm {
  const scopes = body.scopes;
  return {
    name: body.name ?? '',
    scopes: typeof scopes === 'string' ? [scopes] : (scopes ?? []),
    expiresOn: body.expiresOn?.trim() ?? '',
    allowedIps: body.allowedIps ?? '',
  };
}

/** `YYYY-MM-DD` → that day's 00:00 UTC; anything else is a refusal in words. */
function expiryOf(expiresOn: string): string | null {
  if (expiresOn === '') return null;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(expiresOn))
    throw new UsageError('Give the expiry as a date (YYYY-MM-DD), or leave it empty.');
  return `${expiresOn}T00:00:00Z`;
}

/** Renders the keys page of a session's portal; `?key=` chooses whose usage is charted. */
function pageRenderer(keys: Keys) {
  return async (
    reply: FastifyReply,
    session: WebSession,
    extra: Partial<ApiKeysPageProps> & { usageOf?: number | undefined } = {},
    status = 200,
  ) => {
    const { usageOf, ...props } = extra;
    const list = await keys.list(session.portalId);
    const chosen = list.find((k) => k.id === usageOf) ?? list[0];
    const usage = chosen
      ? { key: chosen, report: await keys.usage(session.portalId, chosen.id, USAGE_DAYS) }
      : null;
    return sendPage(
      reply,
      <ApiKeysPage
        email={session.email}
        csrfToken={session.csrfToken}
        keys={list}
        usage={usage}
        {...props}
      />,
      status,
    );
  };
}

export async function apiKeysPages(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const { sessions, apiKeys } = opts;
  guardPortalArea(app, sessions, { home: '/settings/keys', adminOnly: NOT_ADMIN });
  const render = pageRenderer(apiKeys);

  /** A change by an administrator; a refusal shows the page with its reason. */
  const change = adminChange((err, session, request, reply) => {
    if (!(err instanceof UsageError)) throw err;
    const form =
      request.url.split('?')[0] === '/settings/keys'
        ? { form: formOf(request.body as Static<typeof CreateBody>) }
        : {};
    return render(
      reply,
      session,
      { error: err.message, ...form },
      err.code === 'not_found' ? 404 : 400,
    );
  });

  /** The key of a confirmation page, or the page with a 404 for a key of no portal or another. */
  const confirmPage =
    (Page: typeof ConfirmRotatePage) =>
    async (request: FastifyRequest<{ Params: Static<typeof IdParams> }>, reply: FastifyReply) => {
      const session = signedIn(request);
      const wanted = /^\d{1,10}$/.test(request.params.id) ? Number(request.params.id) : 0;
      const key = (await apiKeys.list(session.portalId)).find((k) => k.id === wanted);
      if (!key) return render(reply, session, { error: 'No API key with this id.' }, 404);
      return sendPage(
        reply,
        <Page email={session.email} csrfToken={session.csrfToken} apiKey={key} />,
      );
    };

  const showOnce = async (
    request: FastifyRequest,
    reply: FastifyReply,
    shown: NonNullable<ApiKeysPageProps['newSecret']>,
    done: 'key_created' | 'key_rotated',
  ) => {
    await sessions.stashOnce(request, JSON.stringify(shown));
    return reply.redirect(`/settings/keys?done=${done}&key=${shown.keyId}`, 303);
  };

  app.get<{ Querystring: Static<typeof Query> }>(
    '/settings/keys',
    { schema: { querystring: Query, response: { 200: HtmlPage, 302: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      const session = signedIn(request);
      const usageOf = /^\d{1,10}$/.test(request.query.key ?? '')
        ? Number(request.query.key)
        : undefined;
      const flash = flashOf(request.query);
      if (flash?.key === 'key_created' || flash?.key === 'key_rotated') {
        const stashed = await sessions.takeOnce(request);
        if (stashed) {
          const newSecret = JSON.parse(stashed) as NonNullable<ApiKeysPageProps['newSecret']>;
          return render(reply, session, { newSecret, usageOf });
        }
      }
      return render(reply, session, { flash, usageOf });
    },
  );

  app.post(
    '/settings/keys',
    { schema: { body: CreateBody, response: PageResponses } },
    change(async (session, request, reply) => {
      const form = formOf(request.body as Static<typeof CreateBody>);
      const allowed = form.allowedIps
        .split(/[\s,]+/)
        .map((s) => s.trim())
        .filter(Boolean);
      const { key, secret } = await apiKeys.create({
        portalId: session.portalId,
        name: form.name,
        scopes: form.scopes,
        expiresAt: expiryOf(form.expiresOn),
        allowedIps: allowed.length > 0 ? allowed : null,
        actor: actorOf(session),
        via: 'from the settings page',
      });
      return showOnce(request, reply, { keyId: key.id, name: key.name, secret }, 'key_created');
    }),
  );

  app.get(
    '/settings/keys/:id/rotate',
    {
      config: { page: { back: '/settings/keys' } },
      schema: { params: IdParams, response: { ...PageResponses, 302: Redirect } },
    },
    confirmPage(ConfirmRotatePage),
  );
  app.get(
    '/settings/keys/:id/revoke',
    {
      config: { page: { back: '/settings/keys' } },
      schema: { params: IdParams, response: { ...PageResponses, 302: Redirect } },
    },
    confirmPage(ConfirmRevokePage),
  );

  app.post(
    '/settings/keys/:id/rotate',
    { schema: { params: IdParams, body: RotateBody, response: PageResponses } },
    change(async (session, request, reply) => {
      const { id: raw } = request.params as Static<typeof IdParams>;
      const body = request.body as Static<typeof RotateBody>;
      if (body.confirm !== 'yes') {
        return reply.redirect(`/settings/keys/${encodeURIComponent(raw)}/rotate`, 303);
      }
      const id = keyIdOf(request);
      const overlap = Number(body.overlap ?? '0');
      if (!/^\d{1,6}$/.test(body.overlap ?? '0') || overlap > MAX_ROTATION_OVERLAP_S)
        throw new UsageError('Choose an overlap of at most 24 hours.');
      const { key, secret } = await apiKeys.rotate({
        portalId: session.portalId,
        keyId: id,
        overlapSeconds: overlap,
        actor: actorOf(session),
        via: 'from the settings page',
      });
      return showOnce(request, reply, { keyId: key.id, name: key.name, secret }, 'key_rotated');
    }),
  );

  app.post(
    '/settings/keys/:id/revoke',
    { schema: { params: IdParams, body: ConfirmBody, response: PageResponses } },
    change(async (session, request, reply) => {
      const { id: raw } = request.params as Static<typeof IdParams>;
      if ((request.body as Static<typeof ConfirmBody>).confirm !== 'yes') {
        return reply.redirect(`/settings/keys/${encodeURIComponent(raw)}/revoke`, 303);
      }
      const id = keyIdOf(request);
      await apiKeys.revoke({
        portalId: session.portalId,
        keyId: id,
        actor: actorOf(session),
        via: 'from the settings page',
      });
      return reply.redirect('/settings/keys?done=key_revoked', 303);
    }),
  );
}
