/**
 * The inbox's reply: what the reply box offers (free text while the conversation's window is
 * open; else the approved templates of the business number's WABA), and a checked form as the
 * send body of the messaging service, to the conversation's contact from its business number.
 * The checks and errors are the composer's (message-composer.ts), hence the API's.
 *
 * @see docs/messaging.md "Inbox"
 */
import type { FastifyBaseLogger } from 'fastify';
import type { SendMessageBody } from '../../messaging/store/messages-schemas.ts';
import { toAppError } from '../../platform/error-envelope.ts';
import { isReplyMode } from './inbox-compose.ts';
import { summaryOf, type InboxConversation } from './inbox-view.ts';
import {
  chosenTemplate,
  composerTemplates,
  newIdempotencyKey,
  sendBodyOf,
  type ComposerErrors,
  type ComposerField,
  type ComposerForm,
  type ComposerTemplate,
} from '../message-composer.ts';
import type { ReplyView } from './inbox-reply-box.tsx';
import type { WebRoutesOptions } from '../web-options.ts';

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
  rest: {
    form?: ComposerForm;
    errors?: ComposerErrors;
    formError?: string | undefined;
    uploads?: boolean;
    quote?: ReplyView['quote'];
  } = {},
): ReplyView & { chosen: ComposerTemplate | null | undefined } {
  const templates = source.kind === 'ready' ? source.templates : [];
  const chosen = windowOpen ? null : chosenTemplate(templates, choice);
  const mode = isReplyMode(choice) && (choice !== 'file' || rest.uploads) ? choice : 'text';
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
    mode,
    uploads: rest.uploads ?? false,
    quote: rest.quote,
  };
}

/** The send body of a checked reply: to the conversation's contact, from its number. */
export function replyBody(
  conversation: InboxConversation,
  template: ComposerTemplate | null,
  form: ComposerForm,
  context?: string,
): SendMessageBody {
  return withContext(
    sendBodyOf(template, {
      ...form,
      contactId: conversation.contactId,
      to: undefined,
      from: conversation.phoneNumberId,
    }),
    context,
  );
}

/**
 * The send body of a rich kind (`type` and its object, as the contract's API shapes) to the
 * conversation's contact from its number, quoting `context` when given.
 */
export function richBody(
  conversation: InboxConversation,
  kind: { type: string } & Record<string, unknown>,
  context?: string,
): SendMessageBody {
  const body = { contactId: conversation.contactId, from: conversation.phoneNumberId, ...kind };
  // The API's body takes every kind (the union of the messages schema); this one place states
  // it for the kinds the inbox builds.
  return withContext(body as SendMessageBody, context);
}

function withContext(body: SendMessageBody, context: string | undefined): SendMessageBody {
  return context ? { ...body, context: { messageId: context } } : body;
}

/** Messages searched for a quoted one (the thread's latest page). */
const QUOTE_SEARCH = 50;

/**
 * The quote of `messageId` as the box shows it: its one-line summary when it is among the
 * conversation's latest messages, else words that say it is an earlier one.
 */
export async function quoteOf(
  opts: Pick<WebRoutesOptions, 'inbox'>,
  portalId: number,
  conversation: InboxConversation,
  messageId: string,
): Promise<NonNullable<ReplyView['quote']>> {
  const page = await opts.inbox.messages(portalId, conversation.id, { limit: QUOTE_SEARCH });
  const m = page.items.find((x) => x.id === messageId);
  return { messageId, summary: m ? summaryOf(m) : 'An earlier message of this conversation' };
}

/** The fields the reply box has; a refusal about any other goes above the form. */
export function isReplyField(field: ComposerField): boolean {
  return (
    field === 'text' ||
    field === 'compose' ||
    field === 'listButton' ||
    field === 'caption' ||
    field === 'file' ||
    /^(parameter|button|row)-/.test(field)
  );
}

/** Whether the box shown for a window (open or closed) has `field`. */
export function isShownField(field: ComposerField, windowOpen: boolean): boolean {
  if (!isReplyField(field)) return false;
  const templateField = field === 'compose' || field.startsWith('parameter-');
  return templateField !== windowOpen;
}
