/**
 * What a person's tap on the sandbox phone sends: a reply button of an interactive message →
 * `{type: "interactive", interactive: {type: "button_reply", button_reply: {id, title}}}`, a
 * list row → `{type: "list_reply", list_reply: {id, title, description?}}`, a template's quick
 * reply (`quick_reply:<index>`) → `{type: "button", button: {payload, text}}`; each with
 * `context: {id: <the wamid of the tapped message>}` (cloud-inbound.ts adds `context.from`, the
 * business number).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples#reply-button
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples#list-messages
 */
import type { PhoneMessage } from './cloud-state.ts';
import type { InboundMessage } from './inbound-message.ts';

type Json = Record<string, unknown>;
const asArray = (v: unknown) => (Array.isArray(v) ? (v as Json[]) : []);

/**
 * The message a person sends by tapping `replyId` on business message `m`.
 *
 * @returns the inbound message, or undefined when `m` has no such button or row.
 */
export function tappedReply(m: PhoneMessage, replyId: string): InboundMessage | undefined {
  const context = { id: m.wamid };
  const quick = /^quick_reply:([0-9]{1,2})$/.exec(replyId);
  if (quick && m.template) {
    const button = m.templateView?.buttons?.[Number(quick[1])];
    if (button?.type !== 'QUICK_REPLY') return undefined;
    return {
      type: 'button',
      button: { payload: button.payload ?? button.text, text: button.text },
      context,
    };
  }
  if (m.type !== 'interactive' || !m.content) return undefined;
  const action = (m.content.action ?? {}) as Json;
  if (m.content.type === 'button') {
    const reply = asArray(action.buttons)
      .map((b) => b.reply as Json)
      .find((r) => r.id === replyId);
    if (!reply) return undefined;
    return {
      type: 'interactive',
      interactive: {
        type: 'button_reply',
        button_reply: { id: replyId, title: String(reply.title) },
      },
      context,
    };
  }
  if (m.content.type !== 'list') return undefined;
  const row = asArray(action.sections)
    .flatMap((s) => asArray(s.rows))
    .find((r) => r.id === replyId);
  if (!row) return undefined;
  return {
    type: 'interactive',
    interactive: {
      type: 'list_reply',
      list_reply: {
        id: replyId,
        title: String(row.title),
        ...(typeof row.description === 'string' && { description: row.description }),
      },
    },
    context,
  };
}
