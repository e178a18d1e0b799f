/**
 * The inbox's reply: what the reply box offers (free text while the conversation's window is
 * open; else the approved templates of the business number's WABA), and a checked form as the
 * send body of the messaging service, to the conversation's contact from its business number.
 * The checks and errors are the composer's (message-composer.ts), hence the API's.
 *
 * @see docs/messaging.md "Inbox"
 */
import type { FastifyBaseLogger } from 'fastify';
import type { SendMessageBody } from '../messaging/messages/messages-schemas.ts';
import { toAppError } from '../platform/error-envelope.ts';
import type { InboxConversation } from './inbox-view.ts';
import {
  chosenTemplate,
  composerTemplates,
  newIdempotencyKey,
  sendBodyOf,
  type ComposerErrors,
  type ComposerField,
  type ComposerForm,
  type ComposerTemplate,
} from './message-composer.ts';
import type { ReplyView } from './pages/inbox-reply.tsx';
import type { WebRoutesOptions } from './web-options.ts';

/** What the reply box offers for `conversation` (`windowOpen` decided by the caller). */
export async function replySource(
  opts: Pick<WebRoutesOptions, 'messaging'>,
  portalId: number,
  conversation: InboxConversation,
  windowOpen: boolean,
  log: FastifyBaseLogger,
): Promise<ReplyView['source']> {
  if (windowOpen) return { kind: 'ready', templates: [] };
  try {
    const numbers = await opts.messaging.provider.numbers(portalId);
    const number = numbers.filter((n) => n.id === conversation.phoneNumberId);
    if (number.length === 0)
      return {
        kind: 'unavailable',
        message: 'This business number is no longer in the connected account.',
      };
    const templates = await opts.messaging.provider.templates(portalId);
    return { kind: 'ready', templates: composerTemplates(templates, number) };
  } catch (err) {
    const e = toAppError(err);
    if (e.code === 'not_connected') return { kind: 'not_connected' };
    if (e.code === 'internal_error') log.error({ err }, '/inbox: templates failed');
    else log.warn({ code: e.code }, '/inbox: templates unavailable');
    return {
      kind: 'unavailable',
      message: e.code === 'internal_error' ? 'The templates could not be read.' : e.message,
    };
  }
}

/**
 * A reply box: the choice (a template id, when the window is closed) resolved against the
 * source; `undefined` template when the choice names a template no longer offered.
 */
export function replyView(
  conversation: InboxConversation,
  windowOpen: boolean,
  source: ReplyView['source'],
  choice: string | undefined,
  rest: { form?: ComposerForm; errors?: ComposerErrors; formError?: string | undefined } = {},
): ReplyView & { chosen: ComposerTemplate | null | undefined } {
  const templates = source.kind === 'ready' ? source.templates : [];
  const chosen = windowOpen ? null : chosenTemplate(templates, choice);
  return {
    conversationId: conversation.id,
    windowOpen,
    source,
    template: chosen ?? (windowOpen ? null : (templates[0] ?? null)),
    chosen,
    form: rest.form ?? { parameters: [] },
    errors: rest.errors ?? {},
    formError: rest.formError,
    idempotencyKey: newIdempotencyKey(),
  };
}

/** The send body of a checked reply: to the conversation's contact, from its number. */
export function replyBody(
  conversation: InboxConversation,
  template: ComposerTemplate | null,
  form: ComposerForm,
): SendMessageBody {
  return sendBodyOf(template, {
    ...form,
    contactId: conversation.contactId,
    to: undefined,
    from: conversation.phoneNumberId,
  });
}

/** The fields the reply box has; a refusal about any other goes above the form. */
export function isReplyField(field: ComposerField): boolean {
  return field === 'text' || field === 'compose' || field.startsWith('parameter-');
}
