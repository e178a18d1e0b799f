/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The sandbox phone page (plain HTML forms, no script): a form to write to a business first,
 * then each person's thread — the business's messages to them, every kind as WhatsApp shows it
 * (phone-message.tsx: thumbnails, document links, buttons to tap, a list's menu, a template's
 * header, body and buttons with their parameters, the quoted message above a reply; status;
 * the person's reaction) and what they wrote (with "read" once the business marked it read, and
 * the business's reaction) — and what the person can do: reply with text, send STOP, share a
 * photo, document or other medium (a bundled sample or an uploaded file), share a location,
 * tap a reply button or a list row, and react to or quote-reply a message they received.
 */
import type { InboundOutcome } from './cloud-inbound.ts';
import { describePhoneNumber, phoneNumberIdsOf, type PhoneMessage } from './cloud-state.ts';
import { isTyping } from './cloud-read.ts';
import { appsOfWaba } from './cloud-webhooks.ts';
import { findMessage } from './inbound-message.ts';
import { BusinessMessage, Medium, MESSAGE_STYLE, Quote } from './phone-message.tsx';
import { Layout, page } from './pages.tsx';
import { SAMPLES } from './samples/samples.ts';
import { isBsuid } from './sandbox-people.ts';
import type { SandboxState } from './sandbox-state.ts';

/** The reactions the page offers (an empty one removes the person's reaction). */
export const REACTIONS = ['👍', '❤️', '😂', '😮', '🙏'];

const PHONE_STYLE = `
.thread{list-style:none;padding:0;margin:var(--s-3) 0}
.thread li{border:1px solid var(--c-line);border-radius:var(--radius);padding:var(--s-2) var(--s-3);margin:var(--s-2) 0;max-width:90%;overflow-wrap:anywhere}
.thread li.mine{margin-left:auto;background:#e7f6e9}
.meta{color:var(--c-muted);font-size:.85rem}
details{margin:var(--s-2) 0}summary{cursor:pointer;color:var(--c-accent);min-height:1.5rem}
.outcome p{overflow-wrap:anywhere}
.ticks.read{color:#0b57a8;font-weight:600}
fieldset{border:1px solid var(--c-line);border-radius:6px;margin:var(--s-2) 0;min-width:0}
.row{display:flex;flex-wrap:wrap;gap:var(--s-2)}.row label{flex:1 1 8rem}
`;

/** A line for what a person wrote (their media show as thumbnails or links instead). */
function describe(m: PhoneMessage): string {
  if (m.type !== 'text') return `${m.type}${m.text !== undefined ? `: ${m.text}` : ''}`;
  return m.text ?? '';
}

const MEDIA = new Set(['image', 'video', 'audio', 'document', 'sticker']);
const isMedia = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** The wamid a message quotes: a business's `context.message_id`, a person's `context.id`. */
function quotedId(m: PhoneMessage): string | undefined {
  if (m.type === 'reaction') return undefined;
  const context = m.inbound?.context as { id?: string } | undefined;
  return m.contextId ?? context?.id;
}

/** The hidden fields every person's form carries: who writes to which number. */
function Who(p: { waId: string; phoneNumberId: string }) {
  return (
    <>
      <input type="hidden" name="from" value={p.waId} />
      <input type="hidden" name="phone_number_id" value={p.phoneNumberId} />
    </>
  );
}

/** Reply-quoting and reacting to one message the person received. */
function ReceivedActions(p: { m: PhoneMessage }) {
  const { m } = p;
  return (
    <details>
      <summary>Reply or react</summary>
      <form method="post" action="/sandbox/phone/reply">
        <Who waId={m.waId} phoneNumberId={m.phoneNumberId} />
        <input type="hidden" name="context_id" value={m.wamid} />
        <label>
          Reply quoting this message <input name="text" required maxLength={4096} />
        </label>
        <button type="submit">Send reply</button>
      </form>
      <form method="post" action="/sandbox/phone/react">
        <Who waId={m.waId} phoneNumberId={m.phoneNumberId} />
        <input type="hidden" name="message_id" value={m.wamid} />
        <fieldset>
          <legend>React</legend>
          {REACTIONS.map((emoji) => (
            <button
              type="submit"
              name="emoji"
              value={emoji}
              key={emoji}
              aria-label={`React ${emoji}`}
            >
              {emoji}
            </button>
          ))}
          <button type="submit" name="emoji" value="">
            Remove reaction
          </button>
        </fieldset>
      </form>
    </details>
  );
}

/** What a person can send in their thread. */
function Composer(p: { waId: string; phoneNumberId: string }) {
  return (
    <>
      <form method="post" action="/sandbox/phone/reply">
        <Who {...p} />
        <label>
          Message <input name="text" required maxLength={4096} />
        </label>
        <button type="submit">Send</button>
      </form>
      <form method="post" action="/sandbox/phone/reply">
        <Who {...p} />
        <input type="hidden" name="text" value="STOP" />
        <button type="submit">Send STOP</button>
      </form>
      <details>
        <summary>Send a photo, document or other file</summary>
        <form method="post" action="/sandbox/phone/media" enctype="multipart/form-data">
          <Who {...p} />
          <label>
            Sample file{' '}
            <select name="sample">
              {SAMPLES.map((s) => (
                <option value={s.key} key={s.key}>
                  {s.label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Or upload a file (up to 1 MB; an image is sent as a photo, anything else as a document){' '}
            <input type="file" name="file" />
          </label>
          <label>
            Caption <input name="caption" maxLength={1024} />
          </label>
          <button type="submit">Send file</button>
        </form>
      </details>
      <details>
        <summary>Share a location</summary>
        <form method="post" action="/sandbox/phone/location">
          <Who {...p} />
          <div class="row">
            <label>
              Latitude <input name="latitude" required inputMode="decimal" value="52.3676" />
            </label>
            <label>
              Longitude <input name="longitude" required inputMode="decimal" value="4.9041" />
            </label>
          </div>
          <label>
            Place name <input name="name" maxLength={200} />
          </label>
          <label>
            Address <input name="address" maxLength={500} />
          </label>
          <button type="submit">Share location</button>
        </form>
      </details>
    </>
  );
}

/** One person's thread and composer. */
function Person(p: {
  waId: string;
  messages: PhoneMessage[];
  lookup: (wamid: string) => PhoneMessage | undefined;
  /** The business numbers the person sees typing now (cloud-read.ts). */
  typing: string[];
}) {
  const last = p.messages.at(-1)!;
  return (
    <section aria-labelledby={`person-${p.waId}`}>
      <h2 id={`person-${p.waId}`}>
        {isBsuid(p.waId) ? `A person with a username, no visible number (${p.waId})` : `+${p.waId}`}
      </h2>
      <ol class="thread">
        {p.messages.map((m) => {
          // A business's reaction shows on the message it reacts to, not as a message.
          if (m.direction === 'received' && m.type === 'reaction') return null;
          const mine = m.direction === 'sent_by_person';
          const number = describePhoneNumber(m.phoneNumberId).display_phone_number;
          const status = mine ? (m.readAt !== undefined ? 'read' : 'delivered') : m.status;
          return (
            <li key={m.wamid} class={mine ? 'mine' : undefined}>
              <span class="meta">
                {mine ? `to ${number}` : `from ${number}`} · {new Date(m.at).toISOString()} ·{' '}
                {mine ? (
                  <span class={status === 'read' ? 'ticks read' : 'ticks'}>{status} ✓✓</span>
                ) : (
                  status
                )}
              </span>
              <br />
              {quotedId(m) !== undefined && <Quote quoted={p.lookup(quotedId(m)!)} />}
              {!mine ? (
                <BusinessMessage m={m} />
              ) : MEDIA.has(m.type) && isMedia(m.inbound?.[m.type]) ? (
                <Medium kind={m.type} media={m.inbound[m.type] as Record<string, unknown>} />
              ) : (
                describe(m)
              )}
              {m.reaction !== undefined && <span class="meta"> · you reacted {m.reaction}</span>}
              {m.businessReaction !== undefined && (
                <span class="meta"> · the business reacted {m.businessReaction}</span>
              )}
              {!mine && <ReceivedActions m={m} />}
            </li>
          );
        })}
      </ol>
      {p.typing.map((id) => (
        <p key={id} class="meta" data-typing={id}>
          {describePhoneNumber(id).display_phone_number} is typing…
        </p>
      ))}
      <Composer waId={p.waId} phoneNumberId={last.phoneNumberId} />
    </section>
  );
}

/** The whole page. */
export function PhonePage(p: {
  numbers: string[];
  people: [string, PhoneMessage[]][];
  /** A kept message by wamid (what a quote shows). */
  lookup: (wamid: string) => PhoneMessage | undefined;
  /** The business numbers a person sees typing now. */
  typingFor?: (waId: string) => string[];
  /** What the last action did (shown above the forms, so the phone stays in reach). */
  outcome?: string[] | undefined;
}) {
  return (
    <Layout title="Sandbox phone" style={PHONE_STYLE + MESSAGE_STYLE}>
      <h1>Sandbox phone</h1>
      {p.outcome && (
        <div class="outcome" role="status">
          {p.outcome.map((line, i) => (
            <p key={i}>{line}</p>
          ))}
        </div>
      )}
      <p>
        The messages each test number received, and what the person sends back (it reaches the app
        as inbound webhooks).
      </p>
      <h2>Write to a business</h2>
      <form method="post" action="/sandbox/phone/reply">
        <label>
          Business number{' '}
          <select name="phone_number_id">
            {p.numbers.map((id) => (
              <option key={id} value={id}>
                {describePhoneNumber(id).display_phone_number} ({id})
              </option>
            ))}
          </select>
        </label>
        <label>
          Your number (digits, with country code){' '}
          <input name="from" pattern="[1-9][0-9]{6,14}" required inputMode="numeric" />
        </label>
        <label>
          Your name <input name="name" maxLength={100} />
        </label>
        <label>
          Message <input name="text" required maxLength={4096} />
        </label>
        <button type="submit">Send</button>
      </form>
      <h2>Write with a username (no visible number)</h2>
      <form method="post" action="/sandbox/phone/reply">
        <label>
          Business number{' '}
          <select name="phone_number_id">
            {p.numbers.map((id) => (
              <option key={id} value={id}>
                {describePhoneNumber(id).display_phone_number} ({id})
              </option>
            ))}
          </select>
        </label>
        <label>
          Your username <input name="username" pattern="[a-z0-9._]{3,35}" required />
        </label>
        <label>
          Your name <input name="name" maxLength={100} />
        </label>
        <label>
          Message <input name="text" required maxLength={4096} />
        </label>
        <button type="submit">Send</button>
      </form>
      {p.people.map(([waId, messages]) => (
        <Person
          key={waId}
          waId={waId}
          messages={messages}
          lookup={p.lookup}
          typing={p.typingFor?.(waId) ?? []}
        />
      ))}
    </Layout>
  );
}

/** Every business number of a WABA some app was granted. */
function businessNumbers(state: SandboxState): string[] {
  const wabas = new Set<string>();
  for (const g of state.grants.values()) for (const id of g.assetIds) wabas.add(id);
  return [...wabas].filter((w) => appsOfWaba(state, w).length > 0).flatMap(phoneNumberIdsOf);
}

/** The phone page's HTML, with what the last action did on top. */
export function phoneHtml(state: SandboxState, outcome?: string[]): string {
  const people = new Map<string, PhoneMessage[]>();
  for (const m of state.cloud.messages.slice(-500)) {
    const list = people.get(m.waId);
    if (list) list.push(m);
    else people.set(m.waId, [m]);
  }
  return page(
    <PhonePage
      numbers={businessNumbers(state)}
      people={[...people.entries()]}
      lookup={(wamid) => findMessage(state, wamid)}
      typingFor={(waId) =>
        [...new Set((people.get(waId) ?? []).map((m) => m.phoneNumberId))].filter((id) =>
          isTyping(state, id, waId),
        )
      }
      outcome={outcome}
    />,
  );
}

/** What an inbound message did, for the phone page. */
export function outcomeLines(outcome: InboundOutcome): string[] {
  if (!outcome.ok)
    return [
      {
        unknown_number: 'No such business number in the sandbox.',
        no_app: 'No app holds a grant for this business number.',
        unknown_media: 'No such medium or sample file.',
        no_message: 'Nothing to send.',
        no_person: 'Give the person a phone number, a username or a user id.',
      }[outcome.reason],
    ];
  return [
    `Message ${outcome.wamid} written.`,
    ...outcome.deliveries.map((d) => `App ${d.appId} answered ${d.status}.`),
  ];
}

/** The HTTP status of a failed inbound message. */
export const failureStatus = (reason: string) =>
  reason === 'unknown_number' || reason === 'no_app' ? 404 : 400;
