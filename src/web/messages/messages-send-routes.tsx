/**
 * `POST /messages/send`: the composer's form, CSRF-checked, sent through the messaging service
 * exactly as the API's `POST /messaging/messages` (same checks in the same order, same errors,
 * the price reserved from the credit). Sent: a redirect to `/messages` with the fixed
 * `message_sent` flash, which links to the message in the log. Refused: `/messages` again with
 * the refusal next to its field and every value kept.
 *
 * @see docs/messaging.md "Sending"
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import {
  TEMPLATE_PARAMETER_MAX,
  TEMPLATE_PARAMETERS_MAX,
  TEXT_BODY_MAX,
} from '../../messaging/store/messages-schemas.ts';
import {
  chosenTemplate,
  formErrors,
  IDEMPOTENCY_KEY,
  newIdempotencyKey,
  placeRefusal,
  sendBodyOf,
  type ComposerForm,
  type ComposerView,
} from '../message-composer.ts';
import { readComposer, renderMessagesPage, type ComposerReads } from './messages-page-routes.tsx';
import { signedIn } from '../page-area.ts';
import { FormField, HtmlPage, Redirect, type WebRoutesOptions } from '../web-options.ts';

const Parameter = Type.String({ maxLength: TEMPLATE_PARAMETER_MAX });
const SendForm = Type.Object({
  csrf: FormField(100),
  /** `text` or the template id chosen. */
  compose: FormField(64),
  /** The form's idempotency key. */
  key: FormField(64),
  from: FormField(64),
  contactId: FormField(64),
  to: FormField(40),
  text: FormField(TEXT_BODY_MAX),
  /** The template's variables, in order (one field each). */
  parameter: Type.Optional(
    Type.Union([Parameter, Type.Array(Parameter, { maxItems: TEMPLATE_PARAMETERS_MAX })]),
  ),
});
type SendFormBody = Static<typeof SendForm>;

const PAGE = { 200: HtmlPage, 302: Redirect, 303: Redirect, 403: HtmlPage };
const REFUSED = [400, 402, 404, 409, 422, 502, 504] as const;

function formOf(body: SendFormBody): ComposerForm {
  const p = body.parameter;
  return {
    from: body.from,
    contactId: body.contactId,
    to: body.to,
    text: body.text,
    parameters: p === undefined ? [] : Array.isArray(p) ? p : [p],
  };
}

export async function messagesSendRoutes(
  app: FastifyInstance,
  opts: WebRoutesOptions,
): Promise<void> {
  const { messaging } = opts;
  app.post<{ Body: SendFormBody }>(
    '/messages/send',
    {
      schema: {
        body: SendForm,
        response: { ...PAGE, ...Object.fromEntries(REFUSED.map((s) => [s, HtmlPage])) },
      },
    },
    async (request, reply) => {
      const session = signedIn(request);
      const body = request.body;
      const reads: ComposerReads = await readComposer(opts, session.portalId, request.log);
      const { source } = reads;
      const form = formOf(body);
      const back = (composer: Omit<ComposerView, 'source' | 'idempotencyKey'>, status: number) =>
        renderMessagesPage(
          opts,
          request,
          reply,
          session,
          {},
          {
            reads,
            composer: { ...composer, source, idempotencyKey: newIdempotencyKey() },
            status,
          },
        );
      if (source.kind !== 'ready') return back({ template: null, form, errors: {} }, 409);
      const template = chosenTemplate(source.templates, body.compose);
      if (template === undefined) {
        const words = 'This template is no longer approved in the account; choose another.';
        return back({ template: null, form, errors: { compose: words } }, 422);
      }
      const errors = formErrors(template, form);
      if (Object.keys(errors).length > 0) return back({ template, form, errors }, 400);
      let sent;
      try {
        sent = await messaging.send.sendMessage({
          principal: { portalId: session.portalId },
          input: sendBodyOf(template, form),
          idempotencyKey: body.key && IDEMPOTENCY_KEY.test(body.key) ? body.key : undefined,
          requestId: request.id,
        });
      } catch (err) {
        const placed = placeRefusal(err, form);
        if (!placed) throw err;
        return placed.field
          ? back({ template, form, errors: { [placed.field]: placed.words } }, placed.status)
          : back({ template, form, errors: {}, formError: placed.words }, placed.status);
      }
      const id = sent.body.data.id;
      return reply.redirect(`/messages?done=message_sent&message=${id}#m-${id}`, 303);
    },
  );
}
