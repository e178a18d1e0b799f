/**
 * The inbox's sends besides the reply box's text, template, buttons and list
 * (inbox-reply-routes.ts), each CSRF-checked and sent through the messaging service exactly as
 * the API's `POST /messaging/messages`, to the conversation's contact from its business number:
 *
 * - `POST /inbox/{conversationId}/react`: `messageId` and `emoji` (one of the page's choices,
 *   or empty to remove our reaction) → a `reaction` message; back to the message.
 * - `POST /inbox/{conversationId}/attach`: multipart (`csrf`, `key`, `context?`, `caption?`,
 *   then `file`): the file streamed to the upload (the API's `POST /messaging/media`, its type
 *   checked by content), then sent as the kind it is (image, video, audio, document, sticker)
 *   by our media id, with its caption and, for a document, its file name.
 *
 * A refusal (a choice not offered, a file refused, the service's own refusal) shows the inbox
 * again with the refusal next to its field or above the box; nothing is sent.
 *
 * @see docs/messaging.md "Inbox"
 */
import fastifyMultipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { sendNotFoundPage } from '../../browser/error-pages.tsx';
import { sendFormExpired } from '../../browser/refusal-pages.tsx';
import type { WebSession } from '../../browser/session-store.ts';
import { AppError } from '../../platform/errors.ts';
import {
  captionError,
  LIMITS,
  MESSAGE_ID,
  mediaKindOf,
  mediaObjectOf,
  reactionEmoji,
  type ReplyMode,
} from './inbox-compose.ts';
import { quoteOf, replySource, replyView, richBody } from './inbox-reply.ts';
import { conversationOf, CONVERSATION_FORM, renderInbox } from './inbox-routes.tsx';
import { windowWords, type InboxConversation } from './inbox-view.ts';
import {
  IDEMPOTENCY_KEY,
  placeRefusal,
  type ComposerErrors,
  type ComposerForm,
} from '../message-composer.ts';
import {
  FormField,
  HtmlPage,
  Redirect,
  type InboxUpload,
  type WebRoutesOptions,
} from '../web-options.ts';
import { signedIn, streamedFormTokenOk } from '../page-area.ts';

/** The largest file the page takes, in bytes (the Cloud API's largest: a 100 MB document). */
export const ATTACH_MAX_BYTES = 100 * 1024 * 1024;

const Params = Type.Object({ conversationId: Type.String({ maxLength: 100 }) });
const ReactForm = Type.Object({
  csrf: FormField(100),
  messageId: FormField(100),
  emoji: FormField(32),
});
const STATUSES = [200, 302, 303, 400, 402, 403, 404, 409, 413, 415, 422, 502, 504] as const;
const RESPONSES = Object.fromEntries(
  STATUSES.map((s) => [s, s === 302 || s === 303 ? Redirect : HtmlPage]),
);

/** The inbox again, its box in `mode` with the form, errors and quote given. */
async function back(
  opts: WebRoutesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  session: WebSession,
  conversation: InboxConversation,
  box: {
    mode: ReplyMode;
    status: number;
    form?: ComposerForm | undefined;
    errors?: ComposerErrors | undefined;
    formError?: string | undefined;
    context?: string | undefined;
  },
): Promise<FastifyReply> {
  const windowOpen = windowWords(conversation.windowExpiresAt, new Date()).open;
  const [source, quote] = await Promise.all([
    replySource(opts, session.portalId, conversation, windowOpen, request.log),
    box.context ? quoteOf(opts, session.portalId, conversation, box.context) : undefined,
  ]);
  const view = replyView(conversation, windowOpen, source, box.mode, {
    form: box.form ?? { parameters: [] },
    errors: box.errors ?? {},
    formError: box.formError,
    uploads: !!opts.messaging.upload,
    quote,
  });
  return renderInbox(
    opts,
    request,
    reply,
    session,
    { conversation, query: {}, reply: view },
    box.status,
  );
}

/** Send `input` for the page; a refusal of the service as the page's words, else thrown. */
async function send(
  opts: WebRoutesOptions,
  request: FastifyRequest,
  session: WebSession,
  input: Parameters<WebRoutesOptions['messaging']['send']['sendMessage']>[0]['input'],
  key?: string,
): Promise<{ id: string } | { refused: { words: string; status: number } }> {
  try {
    const sent = await opts.messaging.send.sendMessage({
      principal: { portalId: session.portalId },
      input,
      idempotencyKey: key && IDEMPOTENCY_KEY.test(key) ? key : undefined,
      requestId: request.id,
    });
    return { id: sent.body.data.id };
  } catch (err) {
    const placed = placeRefusal(err, { parameters: [] });
    if (!placed) throw err;
    return { refused: { words: placed.words, status: placed.status } };
  }
}

export async function inboxRichRoutes(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  await app.register(fastifyMultipart, {
    limits: { fileSize: ATTACH_MAX_BYTES, files: 1, fields: 6, fieldSize: 8192, parts: 8 },
  });

  app.post<{ Params: Static<typeof Params>; Body: Static<typeof ReactForm> }>(
    '/inbox/:conversationId/react',
    { config: CONVERSATION_FORM, schema: { params: Params, body: ReactForm, response: RESPONSES } },
    async (request, reply) => {
      const id = request.params.conversationId;
      const session = signedIn(request);
      const conversation = await conversationOf(opts, session, id);
      if (!conversation) return sendNotFoundPage(reply);
      const { messageId } = request.body;
      const emoji = reactionEmoji(request.body.emoji);
      const refuse = (formError: string, status: number) =>
        back(opts, request, reply, session, conversation, { mode: 'text', status, formError });
      if (!messageId || !MESSAGE_ID.test(messageId))
        return refuse('Choose a message of this conversation to react to.', 400);
      if (emoji === null) return refuse('Choose one of the reactions offered.', 400);
      const sent = await send(
        opts,
        request,
        session,
        richBody(conversation, { type: 'reaction', reaction: { messageId, emoji } }),
      );
      if ('refused' in sent) return refuse(sent.refused.words, sent.refused.status);
      return reply.redirect(`/inbox/${conversation.id}#m-${messageId}`, 303);
    },
  );

  app.post<{ Params: Static<typeof Params> }>(
    '/inbox/:conversationId/attach',
    {
      // The token is the first field of the multipart form, read from its stream.
      config: { page: { ...CONVERSATION_FORM.page, streamedCsrf: true } },
      schema: { params: Params, response: RESPONSES },
    },
    async (request, reply) => {
      const id = request.params.conversationId;
      const session = signedIn(request);
      const conversation = await conversationOf(opts, session, id);
      if (!conversation) return sendNotFoundPage(reply);
      const upload = opts.messaging.upload;
      const refuse = (
        status: number,
        p: {
          errors?: ComposerErrors | undefined;
          formError?: string | undefined;
          caption?: string | undefined;
          context?: string | undefined;
        },
      ) =>
        back(opts, request, reply, session, conversation, {
          mode: 'file',
          status,
          form: { parameters: [], caption: p.caption },
          errors: p.errors,
          formError: p.formError,
          context: p.context,
        });
      // A plain form (no file), its token checked by the guard.
      if (!request.isMultipart()) return refuse(415, { formError: 'Send the form with its file.' });
      const read = await readAttachForm(request, session, conversation, upload);
      if (read.kind === 'expired') return sendFormExpired(reply, session);
      const { fields } = read;
      const context =
        fields.context && MESSAGE_ID.test(fields.context) ? fields.context : undefined;
      const caption = fields.caption;
      const again = { caption, context };
      if (read.kind === 'refused')
        return read.field
          ? refuse(read.status, { ...again, errors: { [read.field]: read.words } })
          : refuse(read.status, { ...again, formError: read.words });
      const { fileName, uploaded } = read;
      const kind = mediaKindOf(uploaded);
      const wrongCaption = captionError(kind, caption);
      if (wrongCaption) return refuse(400, { ...again, errors: { caption: wrongCaption } });
      const sent = await send(
        opts,
        request,
        session,
        richBody(
          conversation,
          { type: kind, [kind]: mediaObjectOf(kind, uploaded, caption, fileName) },
          context,
        ),
        fields.key,
      );
      if ('refused' in sent)
        return refuse(sent.refused.status, { ...again, formError: sent.refused.words });
      return reply.redirect(`/inbox/${conversation.id}#m-${sent.id}`, 303);
    },
  );
}

type AttachRead =
  | { kind: 'expired' }
  | {
      kind: 'refused';
      fields: Record<string, string>;
      field: 'file' | 'caption' | null;
      words: string;
      status: number;
    }
  | { kind: 'ready'; fields: Record<string, string>; fileName: string; uploaded: InboxUpload };

/**
 * Read the attach form's parts in order: the fields before the file (the CSRF token checked
 * and the caption's length, before anything is uploaded), then the file streamed to the upload.
 */
async function readAttachForm(
  request: FastifyRequest,
  session: WebSession,
  conversation: InboxConversation,
  upload: WebRoutesOptions['messaging']['upload'],
): Promise<AttachRead> {
  const fields: Record<string, string> = {};
  let result: AttachRead | null = null;
  const refused = (field: 'file' | 'caption' | null, words: string, status: number) => {
    result ??= { kind: 'refused', fields, field, words, status };
  };
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (typeof part.value === 'string') fields[part.fieldname] = part.value;
        continue;
      }
      // Anything but the first `file` part, or after the form was settled, is drained unread.
      if (part.fieldname !== 'file' || result) {
        part.file.resume();
        continue;
      }
      if (!streamedFormTokenOk(request, fields.csrf)) {
        result = { kind: 'expired' };
        part.file.resume();
        continue;
      }
      if ((fields.caption ?? '').length > LIMITS.caption) {
        refused('caption', `At most ${LIMITS.caption} characters.`, 400);
        part.file.resume();
        continue;
      }
      if (!part.filename) {
        refused('file', 'Choose the file to send.', 400);
        part.file.resume();
        continue;
      }
      if (!upload) {
        refused(null, 'Files cannot be sent from this inbox.', 404);
        part.file.resume();
        continue;
      }
      try {
        const uploaded = await upload(session.portalId, {
          phoneNumberId: conversation.phoneNumberId,
          fileName: part.filename,
          file: part.file,
        });
        result = { kind: 'ready', fields, fileName: part.filename, uploaded };
      } catch (err) {
        part.file.resume();
        if (isTooLarge(err)) refused('file', 'The file is larger than 100 MB.', 413);
        else if (err instanceof AppError) refused('file', err.message, err.status);
        else throw err;
      }
    }
  } catch (err) {
    if (!isTooLarge(err)) throw err;
    refused('file', 'The file is larger than 100 MB.', 413);
  }
  if (result) return result;
  if (!streamedFormTokenOk(request, fields.csrf)) return { kind: 'expired' };
  return { kind: 'refused', fields, field: 'file', words: 'Choose the file to send.', status: 400 };
}

/** @fastify/multipart's "over the size limit" error (thrown while the file streams). */
function isTooLarge(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'FST_REQ_FILE_TOO_LARGE';
}
