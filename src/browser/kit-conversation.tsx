/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The page kit's conversation pieces (the rest is kit.tsx), styled by stylesheet.ts:
 *
 * - {@link SplitView}: a list beside its detail; below 900 px one of the two at a time.
 * - {@link ConversationLink}: one entry of a conversation list (title, preview, time, badges).
 * - {@link Thread} and {@link Bubble}: the messages of a conversation, theirs on the left, ours
 *   on the right, each with its time and, for ours, its {@link Ticks}.
 * - {@link Quote}: the message a reply quotes, linking to it; {@link Reactions}: emoji chips.
 * - {@link BubbleButtons} and {@link BubbleList}: an interactive message's reply buttons (shown
 *   disabled: the person taps them on their phone) and its list (the button label and rows).
 * - {@link MessageActions} and {@link ReactionChoice}: what can be done to one message (quote it,
 *   react to it), as links and one small form, working without a script.
 *
 * No inline style and no script (the Content Security Policy stays strict).
 *
 * @see docs/architecture.md "browser/"
 */
import type { ComponentChildren } from 'preact';

/**
 * A list and its detail side by side; below 900 px only `showing` is shown, and the detail
 * carries a link back to the list (`backHref`).
 */
export function SplitView(p: {
  list: ComponentChildren;
  detail: ComponentChildren;
  showing: 'list' | 'detail';
  listLabel: string;
  backHref: string;
  backLabel: string;
}) {
  return (
    <div class={`split showing-${p.showing}`}>
      <nav class="split-list" aria-label={p.listLabel}>
        {p.list}
      </nav>
      <div class="split-detail">
        {p.showing === 'detail' && (
          <a class="split-back" href={p.backHref}>
            ← {p.backLabel}
          </a>
        )}
        {p.detail}
      </div>
    </div>
  );
}

/** One entry of a conversation list; `current` marks the open one (`aria-current`). */
export function ConversationLink(p: {
  href: string;
  title: string;
  preview: ComponentChildren;
  time: { iso: string; text: string };
  badges?: ComponentChildren;
  current?: boolean | undefined;
  unread?: boolean | undefined;
  testid?: string | undefined;
}) {
  return (
    <li>
      <a
        class={p.unread ? 'conv conv-unread' : 'conv'}
        href={p.href}
        aria-current={p.current ? 'page' : undefined}
        data-testid={p.testid}
      >
        <span class="conv-head">
          <span class="conv-title">{p.title}</span>
          <time datetime={p.time.iso}>{p.time.text}</time>
        </span>
        <span class="conv-preview">{p.preview}</span>
        {p.badges && <span class="conv-badges">{p.badges}</span>}
      </a>
    </li>
  );
}

/** A list of conversations ({@link ConversationLink} entries). */
export function ConversationList(p: { children: ComponentChildren; testid?: string | undefined }) {
  return (
    <ul class="convs" data-testid={p.testid}>
      {p.children}
    </ul>
  );
}

/** The messages of a conversation, oldest first ({@link Bubble} entries). */
export function Thread(p: {
  children: ComponentChildren;
  label: string;
  id?: string | undefined;
  testid?: string | undefined;
}) {
  return (
    <ol class="thread" aria-label={p.label} id={p.id} data-testid={p.testid}>
      {p.children}
    </ol>
  );
}

/** A delivery status as ticks, with the word for screen readers and as the tooltip. */
export function Ticks({ status }: { status: 'queued' | 'sent' | 'delivered' | 'read' | 'failed' }) {
  const marks = { queued: '…', sent: '✓', delivered: '✓✓', read: '✓✓', failed: '!' }[status];
  return (
    <span class={`ticks ticks-${status}`} title={status} data-status={status}>
      <span aria-hidden="true">{marks}</span>
      <span class="sr-only">{status}</span>
    </span>
  );
}

/**
 * One message: `in` (theirs, left) or `out` (ours, right), its content, then its time and,
 * for ours, the ticks. `id` is the anchor a {@link Quote} links to.
 */
export function Bubble(p: {
  direction: 'in' | 'out';
  id: string;
  time: { iso: string; text: string };
  status?: 'queued' | 'sent' | 'delivered' | 'read' | 'failed' | undefined;
  reactions?: ComponentChildren;
  /** What can be done to the message ({@link MessageActions}), under it. */
  actions?: ComponentChildren;
  testid?: string | undefined;
  children: ComponentChildren;
}) {
  return (
    <li class={`bubble bubble-${p.direction}`} id={p.id} data-testid={p.testid}>
      <div class="bubble-body">{p.children}</div>
      <div class="bubble-meta">
        <time datetime={p.time.iso}>{p.time.text}</time>
        {p.status && <Ticks status={p.status} />}
      </div>
      {p.reactions}
      {p.actions}
    </li>
  );
}

/** The message a reply quotes: a link to its bubble (`href`) with a short excerpt. */
export function Quote(p: { href?: string | undefined; children: ComponentChildren }) {
  return p.href ? (
    <a class="quote" href={p.href}>
      {p.children}
    </a>
  ) : (
    <span class="quote">{p.children}</span>
  );
}

/**
 * The reactions on a message, each an emoji (with who reacted, `them` or `you`, in words for
 * screen readers).
 */
export function Reactions(p: { items: { emoji: string; by: string }[] }) {
  if (p.items.length === 0) return null;
  return (
    <ul class="reactions" aria-label="Reactions">
      {p.items.map((r, i) => (
        <li key={i} title={r.by}>
          <span aria-hidden="true">{r.emoji}</span>
          <span class="sr-only">
            {r.emoji} from {r.by}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** An interactive message's reply buttons as the person's phone shows them (disabled here). */
export function BubbleButtons(p: { titles: string[] }) {
  return (
    <ul class="bubble-buttons" aria-label="Reply buttons">
      {p.titles.map((t, i) => (
        <li key={i}>
          <button type="button" disabled>
            {t}
          </button>
        </li>
      ))}
    </ul>
  );
}

/** An interactive list: the label of the button that opens it, and its rows (by section). */
export function BubbleList(p: {
  button: string;
  sections: {
    title?: string | undefined;
    rows: { title: string; description?: string | undefined }[];
  }[];
}) {
  return (
    <div class="bubble-list">
      <p class="bubble-list-button">☰ {p.button}</p>
      {p.sections.map((s, i) => (
        <div key={i}>
          {s.title && <p class="muted">{s.title}</p>}
          <ul aria-label={s.title ?? p.button}>
            {s.rows.map((r, j) => (
              <li key={j}>
                {r.title}
                {r.description && <span class="muted"> · {r.description}</span>}
              </li>
            ))}
          </ul>
        </div>
      ))}
    </div>
  );
}

/** The row of what can be done to a message, under its bubble. */
export function MessageActions(p: { children: ComponentChildren }) {
  return <div class="bubble-actions">{p.children}</div>;
}

/**
 * A small choice of emoji for a message: a disclosure (`<details>`, no script) holding one form
 * that posts `csrf`, `messageId` and the chosen `emoji` to `action`; with `removable`, a button
 * that posts an empty emoji (the reaction removed).
 */
export function ReactionChoice(p: {
  action: string;
  csrf: string;
  messageId: string;
  emojis: readonly { emoji: string; name: string }[];
  removable: boolean;
  testid?: string | undefined;
}) {
  return (
    <details class="react" data-testid={p.testid}>
      <summary>React</summary>
      <form method="post" action={p.action} class="react-choice">
        <input type="hidden" name="csrf" value={p.csrf} />
        <input type="hidden" name="messageId" value={p.messageId} />
        {p.emojis.map((e) => (
          <button key={e.emoji} type="submit" name="emoji" value={e.emoji} title={e.name}>
            <span aria-hidden="true">{e.emoji}</span>
            <span class="sr-only">React {e.name}</span>
          </button>
        ))}
        {p.removable && (
          <button type="submit" name="emoji" value="" class="secondary" data-testid="unreact">
            Remove your reaction
          </button>
        )}
      </form>
    </details>
  );
}
