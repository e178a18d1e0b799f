/**
 * The thread's rendering of rich messages, from sample kind objects (the API's shapes): a photo
 * inline by our media id, a document as a link named by its file, reply buttons as disabled
 * buttons, a list as its label and rows, a location, our reaction and theirs on the message
 * they name (not as bubbles), a quoted reply with the quoted snippet, an inbound button reply
 * with the chosen title quoting the buttons message; each message offers "Reply" (a quote) and,
 * inside the window, the reaction choice posting with the CSRF token.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import type { InboxMessage } from '../../src/web/inbox/inbox-view.ts';
import { ThreadMessages } from '../../src/web/inbox/inbox-page.tsx';

const at = (minute: number) => `2026-11-27T10:${String(minute).padStart(2, '0')}:00.000Z`;
const out = (id: string, minute: number, kind: Record<string, unknown>): InboxMessage => ({
  id,
  direction: 'outbound',
  providerMessageId: `wamid.${id}`,
  status: 'delivered',
  queuedAt: at(minute),
  type: 'text',
  ...kind,
});

const SAMPLES: InboxMessage[] = [
  out('msg_photo', 1, { type: 'image', image: { mediaId: 'med_photo1', caption: 'The parcel' } }),
  out('msg_doc', 2, {
    type: 'document',
    document: { mediaId: 'med_doc1', caption: 'Your invoice', filename: 'invoice-42.pdf' },
  }),
  out('msg_buttons', 3, {
    type: 'interactive',
    interactive: {
      type: 'button',
      body: { text: 'Keep the appointment?' },
      action: {
        buttons: [
          { type: 'reply', reply: { id: 'b1', title: 'Confirm' } },
          { type: 'reply', reply: { id: 'b2', title: 'Reschedule' } },
        ],
      },
    },
  }),
  out('msg_list', 4, {
    type: 'interactive',
    interactive: {
      type: 'list',
      body: { text: 'Pick a time' },
      action: {
        button: 'See the times',
        sections: [
          {
            rows: [
              { id: 'r1', title: '9:00' },
              { id: 'r2', title: '14:00' },
            ],
          },
        ],
      },
    },
  }),
  out('msg_voice', 5, {
    type: 'audio',
    audio: { link: 'https://example.com/note.ogg', voice: true },
  }),
  out('msg_where', 5, {
    type: 'location',
    location: { latitude: 51.5, longitude: -0.12, name: 'The shop' },
  }),
  {
    id: 'msg_chose',
    direction: 'inbound',
    type: 'interactive',
    providerMessageId: 'wamid.chose',
    interactive: { buttonReply: { title: 'Reschedule' } },
    context: {
      messageId: null,
      providerMessageId: 'wamid.msg_buttons',
      forwarded: false,
      frequentlyForwarded: false,
    },
    receivedAt: at(6),
  },
  out('msg_react', 7, { type: 'reaction', reaction: { messageId: 'msg_chose', emoji: '👍' } }),
  {
    id: 'msg_theirs',
    direction: 'inbound',
    type: 'reaction',
    providerMessageId: 'wamid.theirs',
    reaction: { messageId: 'msg_doc', providerMessageId: 'wamid.msg_doc', emoji: '❤️' },
    context: null,
    receivedAt: at(8),
  },
  out('msg_quote', 9, {
    type: 'text',
    text: { body: 'See you at two' },
    context: { messageId: 'msg_chose' },
  }),
];

const render = (windowOpen: boolean) =>
  renderToString(
    h(ThreadMessages, {
      conversationId: 'cnv_abc',
      messages: SAMPLES,
      now: new Date(at(10)),
      csrfToken: 'csrf-token-1',
      windowOpen,
    }),
  );

/** The `<li>` of message `id`. */
function bubble(html: string, id: string): string {
  const start = html.indexOf(`id="m-${id}"`);
  assert.ok(start >= 0, `${id} is shown`);
  const end = html.indexOf('</li><li class="bubble', start);
  return html.slice(start, end === -1 ? undefined : end);
}

test('rich outbound kinds render as the phone shows them', () => {
  const html = render(true);
  assert.match(bubble(html, 'msg_photo'), /<img src="\/inbox\/media\/med_photo1" alt="The parcel"/);
  const doc = bubble(html, 'msg_doc');
  assert.match(doc, /href="\/inbox\/media\/med_doc1" download[^>]*>invoice-42\.pdf<\/a>/);
  assert.match(doc, /Your invoice/);
  const buttons = bubble(html, 'msg_buttons');
  assert.match(buttons, /Keep the appointment\?/);
  assert.match(buttons, /<button type="button" disabled>Confirm<\/button>/);
  assert.match(buttons, /<button type="button" disabled>Reschedule<\/button>/);
  const list = bubble(html, 'msg_list');
  assert.match(list, /See the times/);
  assert.match(list, /<li>9:00<\/li><li>14:00<\/li>/);
  assert.match(bubble(html, 'msg_where'), /The shop[^]*51\.50000, -0\.12000/);
  assert.match(bubble(html, 'msg_voice'), /data-testid="voice">🎤 Voice message/);
});

test('a button reply shows the title chosen and quotes the buttons message', () => {
  const chose = bubble(render(true), 'msg_chose');
  assert.match(chose, /<a class="quote" href="#m-msg_buttons">Keep the appointment\?<\/a>/);
  assert.match(chose, /data-testid="chosen"[^]*<strong>Reschedule<\/strong>/);
});

test('reactions sit on their message, ours and theirs; a quoted reply shows the snippet', () => {
  const html = render(true);
  assert.doesNotMatch(html, /id="m-msg_react"|id="m-msg_theirs"/, 'reactions are not bubbles');
  assert.match(bubble(html, 'msg_chose'), /class="reactions"[^]*👍[^]*from you/);
  assert.match(bubble(html, 'msg_doc'), /class="reactions"[^]*❤️[^]*from them/);
  assert.match(
    bubble(html, 'msg_quote'),
    /<a class="quote" href="#m-msg_chose">Reschedule<\/a>[^]*See you at two/,
  );
});

test('each message offers a quote, and the reaction choice while the window is open', () => {
  const open = render(true);
  const chose = bubble(open, 'msg_chose');
  assert.match(chose, /href="\/inbox\/cnv_abc\?quote=msg_chose#reply"/);
  assert.match(chose, /<form method="post" action="\/inbox\/cnv_abc\/react"/);
  assert.match(chose, /name="csrf" value="csrf-token-1"/);
  assert.match(chose, /name="messageId" value="msg_chose"/);
  assert.match(chose, /name="emoji" value="👍"/);
  assert.match(chose, /data-testid="unreact"/, 'our reaction can be removed');
  assert.doesNotMatch(bubble(open, 'msg_doc'), /data-testid="unreact"/, 'theirs only: none');
  const closed = render(false);
  assert.doesNotMatch(closed, /\/react"/, 'no reaction once the window closed');
  assert.match(closed, /\?quote=msg_chose#reply/);
});
