/**
 * `POST /inbox/{conversationId}/reply`: the reply box's form, CSRF-checked, sent through the
 * messaging service exactly as the API's `POST /messaging/messages` (same checks, same errors,
 * the price reserved from the credit, the form's `Idempotency-Key`), to the conversation's
 * contact from its business number. Sent: back to the thread at the new message. Refused: the
 * inbox again with the refusal next to its field and every value kept.
 *
 * @see docs/messaging.md "Inbox"
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { sendNotFoundPage } from '../../browser/error-pages.tsx';
import {
  TEMPLATE_PARAMETER_MAX,
  TEMPLATE_PARAMETERS_MAX,
  TEXT_BODY_MAX,
} from '../../messaging/store/messages-schemas.ts';
import { interactiveOf, isReplyMode, MESSAGE_ID, richFormErrors } from './inbox-compose.ts';
import {
  isShownField,
  quoteOf,
  replyBody,
  replySource,
  replyView,
  richBody,
} from './inbox-reply.ts';
import { conversationOf, CONVERSATION_FORM, renderInbox } from './inbox-routes.tsx';
import { windowWords } from './inbox-view.ts';
import {
  chosenTemplate,
  formErrors,
  IDEMPOTENCY_KEY,
  placeRefusal,
  type ComposerErrors,
  type ComposerField,
  type ComposerForm,
  type ComposerTemplate,
} from '../message-composer.ts';
import { signedIn } from '../page-area.ts';
import { FormField, HtmlPage, Redirect, type WebRoutesOptions } from '../web-options.ts';

/** A repeated form field (one value arrives as a string). */
const Repeated = (maxLength: number, maxItems: number) =>
  Type.Optional(
    Type.Union([Type.String({ maxLength }), Type.Array(Type.String({ maxLength }), { maxItems })]),
  );
const ReplyForm = Type.Object({
  csrf: FormField(100),
  /** `text`, `buttons`, `list`, or the template id chosen. */
  compose: FormField(64),
  key: FormField(64),
  text: FormField(TEXT_BODY_MAX),
  parameter: Repeated(TEMPLATE_PARAMETER_MAX, TEMPLATE_PARAMETERS_MAX),
  /** Reply buttons' titles; a list's button label and rows (checked in the page's words). */
  choice: Repeated(200, 10),
  listButton: FormField(200),
  row: Repeated(200, 20),
  /** The message quoted (`msg_…`). */
  context: FormField(100),
});
const listOf = (v: string | string[] | undefined): string[] =>
  v === undefined ? [] : Array.isArray(v) ? v : [v];
type ReplyFormBody = Static<typeof ReplyForm>;
const Params = Type.Object({ conversationId: Type.String({ maxLength: 100 }) });
const STATUSES = [200, 302, 303, 400, 402, 403, 404, 409, 422, 502, 504] as const;

export async function inboxReplyRoutes(
  app: FastifyInstance,
  opts: WebRoutesOptions,
): Promise<void> {
  const { messaging } = opts;
  app.post<{ Params: Static<typeof Params>; Body: ReplyFormBody }>(
    '/inbox/:conversationId/reply',
    {
      config: CONVERSATION_FORM,
      schema: {
        params: Params,
        body: ReplyForm,
        response: Object.fromEntries(
          STATUSES.map((s) => [s, s === 302 || s === 303 ? Redirect : HtmlPage]),
        ),
      },
    },
    async (request, reply) => {
      const id = request.params.conversationId;
      const session = signedIn(request);
      const body = request.body;
      const conversation = await conversationOf(opts, session, id);
      if (!conversation) return sendNotFoundPage(reply);
      const form: ComposerForm = {
        text: body.text,
        parameters: listOf(body.parameter),
        buttons: listOf(body.choice),
        listButton: body.listButton,
        rows: listOf(body.row),
      };
      const windowOpen = windowWords(conversation.windowExpiresAt, new Date()).open;
      // What the form sent decides the kind of message (the window may have changed since the
      // page was shown; the service then refuses free-form kinds with its own words).
      const rich = body.compose === 'buttons' || body.compose === 'list' ? body.compose : null;
      const wantsTemplate = !!body.compose && !isReplyMode(body.compose);
      const context = body.context && MESSAGE_ID.test(body.context) ? body.context : undefined;
      const quote = context
        ? await quoteOf(opts, session.portalId, conversation, context)
        : undefined;
      const source = await replySource(
        opts,
        session.portalId,
        conversation,
        windowOpen && !wantsTemplate,
        request.log,
      );
      const choice = wantsTemplate ? body.compose : (rich ?? undefined);
      /** A field's error shows next to it only when the box shown again has that field. */
      const shown = (field: ComposerField) => isShownField(field, windowOpen);
      const back = (errors: ComposerErrors, status: number, formError?: string) => {
        const visible: ComposerErrors = {};
        let above = formError;
        for (const [field, words] of Object.entries(errors) as [ComposerField, string][])
          if (shown(field)) visible[field] = words;
          else above ??= words;
        return renderInbox(
          opts,
          request,
          reply,
          session,
          {
            conversation,
            query: {},
            reply: replyView(conversation, windowOpen, source, choice, {
              form,
              errors: visible,
              formError: above,
              uploads: !!opts.messaging.upload,
              quote,
            }),
          },
          status,
        );
      };
      let template: ComposerTemplate | null = null;
      if (wantsTemplate) {
        if (source.kind !== 'ready') return back({}, 409);
        const chosen = chosenTemplate(source.templates, body.compose);
        if (!chosen)
          return back(
            { compose: 'This template is no longer approved in the account; choose another.' },
            422,
          );
        template = chosen;
      }
      if (body.context && !context)
        return back({}, 400, 'The quoted message is not one of this conversation.');
      const errors = rich
        ? richFormErrors(rich, form)
        : formErrors(template, { ...form, contactId: conversation.contactId });
      if (Object.keys(errors).length > 0) return back(errors, 400);
      let sent;
      try {
        sent = await messaging.send.sendMessage({
          principal: { portalId: session.portalId },
          input: rich
            ? richBody(
                conversation,
                { type: 'interactive', interactive: interactiveOf(rich, form) },
                context,
              )
            : replyBody(conversation, template, form, context),
          idempotencyKey: body.key && IDEMPOTENCY_KEY.test(body.key) ? body.key : undefined,
          requestId: request.id,
        });
      } catch (err) {
        const placed = placeRefusal(err, { contactId: conversation.contactId, parameters: [] });
        if (!placed) throw err;
        return placed.field
          ? back({ [placed.field]: placed.words }, placed.status)
          : back({}, placed.status, placed.words);
      }
      const messageId = sent.body.data.id;
      return reply.redirect(`/inbox/${conversation.id}#m-${messageId}`, 303);
    },
  );
}
