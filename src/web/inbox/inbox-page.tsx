/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/inbox` and `/inbox/{conversationId}`, on the page kit: the conversations on the left
 * ({@link ConversationsPane}), the open one's thread on the right ({@link ThreadPane}) with the
 * reply box (inbox-reply-box.tsx). Both panes are also served alone as fragments, which
 * `/assets/inbox.js` fetches when the server says a conversation changed; without the script
 * the page is complete and a reload shows what is new.
 *
 * @see docs/messaging.md "Inbox"
 */
import type { ComponentChildren } from 'preact';
import {
  Bubble,
  ConversationLink,
  ConversationList,
  MessageActions,
  Quote,
  ReactionChoice,
  Reactions,
  SplitView,
  Thread,
} from '../../browser/kit-conversation.tsx';
import { Badge, ButtonLink, Card, EmptyState, PageHeader } from '../../browser/kit.tsx';
import { Layout } from '../../browser/layout.tsx';
import {
  arrangeThread,
  isInbound,
  shortTime,
  summaryOf,
  timeOf,
  titleOf,
  windowWords,
  type InboxConversation,
  type InboxMessage,
} from './inbox-view.ts';
import { REACTION_CHOICES } from './inbox-compose.ts';
import { ReplyBox, type ReplyView } from './inbox-reply-box.tsx';
import { MessageContent } from './inbox-message.tsx';
import type { PortalMember } from '../../accounts/portal-members.ts';
import type { Note } from '../../messaging/conversations/conversations-schemas.ts';
import { NoteForm, ThreadNotes, type NoteFormView } from './inbox-notes.tsx';
import {
  ListFilters,
  listQueryString,
  WorkBadges,
  WorkForm,
  type InboxListQuery,
} from './inbox-work.tsx';

/** The conversation list, with a link to the next (older) page when there is one. */
export function ConversationsPane(p: {
  items: InboxConversation[];
  currentId: string | null;
  nextCursor: string | null;
  now: Date;
  members: PortalMember[];
  /** The list's filters as a query string (carried by its links). */
  listQuery: string;
}) {
  const qs = p.listQuery ? `?${p.listQuery}` : '';
  if (p.items.length === 0)
    return p.listQuery ? (
      <EmptyState title="No conversations match." testid="inbox-empty">
        <a href="/inbox">Show all conversations</a>
      </EmptyState>
    ) : (
      <EmptyState title="No conversations yet." testid="inbox-empty">
        When a person writes to one of your business numbers, the conversation shows here.
      </EmptyState>
    );
  return (
    <>
      <ConversationList testid="conversations">
        {p.items.map((c) => {
          const window = windowWords(c.windowExpiresAt, p.now);
          return (
            <ConversationLink
              key={c.id}
              href={`/inbox/${c.id}${qs}`}
              testid={`conversation-${c.id}`}
              title={titleOf(c)}
              current={c.id === p.currentId}
              unread={c.unreadCount > 0}
              time={shortTime(c.lastMessageAt, p.now)}
              preview={
                <>
                  {c.lastDirection === 'outbound' && 'You: '}
                  {c.preview ?? <em>Content no longer kept</em>}
                </>
              }
              badges={
                <>
                  {c.unreadCount > 0 && (
                    <Badge tone="info" testid="unread">
                      {c.unreadCount} unread
                    </Badge>
                  )}
                  <Badge tone={window.open ? 'ok' : 'neutral'}>{window.words}</Badge>
                  <WorkBadges conversation={c} members={p.members} />
                </>
              }
            />
          );
        })}
      </ConversationList>
      {p.nextCursor && (
        <p class="pager">
          <a
            href={`/inbox?${p.listQuery ? `${p.listQuery}&` : ''}cursor=${encodeURIComponent(p.nextCursor)}`}
          >
            Older conversations
          </a>
        </p>
      )}
    </>
  );
}

/** The thread's messages, oldest first; a quoted reply links to the message it quotes. */
export function ThreadMessages(p: {
  conversationId: string;
  messages: InboxMessage[];
  now: Date;
  csrfToken: string;
  windowOpen: boolean;
}) {
  const { bubbles, reactionsOf } = arrangeThread(p.messages);
  const byId = new Map(bubbles.map((m) => [m.id, m]));
  const byWamid = new Map(
    bubbles.filter((m) => m.providerMessageId).map((m) => [m.providerMessageId, m]),
  );
  if (bubbles.length === 0) return <p class="muted">No messages kept in this conversation.</p>;
  return (
    <Thread label="Messages" testid="thread">
      {bubbles.map((m) => {
        const ctx = isInbound(m) ? m.context : null;
        const quotedId = isInbound(m) ? ctx?.messageId : m.context?.messageId;
        const quoted = quotedId
          ? byId.get(quotedId)
          : ctx?.providerMessageId
            ? byWamid.get(ctx.providerMessageId)
            : undefined;
        const reactions = reactionsOf.get(m.id) ?? [];
        return (
          <Bubble
            key={m.id}
            id={`m-${m.id}`}
            testid={isInbound(m) ? 'bubble-in' : 'bubble-out'}
            direction={isInbound(m) ? 'in' : 'out'}
            time={shortTime(timeOf(m), p.now)}
            status={isInbound(m) ? undefined : m.status}
            reactions={<Reactions items={reactions} />}
            actions={
              <BubbleActions
                conversationId={p.conversationId}
                messageId={m.id}
                csrfToken={p.csrfToken}
                windowOpen={p.windowOpen}
                reacted={reactions.some((r) => r.by === 'you')}
              />
            }
          >
            {ctx?.forwarded && <p class="muted">Forwarded</p>}
            {(quotedId || ctx?.providerMessageId) && (
              <Quote href={quoted ? `#m-${quoted.id}` : undefined}>
                {quoted ? summaryOf(quoted) : 'A message not shown here'}
              </Quote>
            )}
            <MessageContent m={m} />
          </Bubble>
        );
      })}
    </Thread>
  );
}

/** Under a message: quote it in the reply, and (inside the window) react to it. */
function BubbleActions(p: {
  conversationId: string;
  messageId: string;
  csrfToken: string;
  windowOpen: boolean;
  reacted: boolean;
}) {
  return (
    <MessageActions>
      <a
        href={`/inbox/${p.conversationId}?quote=${p.messageId}#reply`}
        data-testid="quote-link"
        aria-label="Reply to this message"
      >
        Reply
      </a>
      {p.windowOpen && (
        <ReactionChoice
          action={`/inbox/${p.conversationId}/react`}
          csrf={p.csrfToken}
          messageId={p.messageId}
          emojis={REACTION_CHOICES}
          removable={p.reacted}
          testid="react"
        />
      )}
    </MessageActions>
  );
}

/** The open conversation: who, the window, the messages and the team's private notes. */
export function ThreadPane(p: {
  conversation: InboxConversation;
  messages: InboxMessage[];
  /** The latest private notes, newest first. */
  notes: Note[];
  olderHref: string | null;
  now: Date;
  csrfToken: string;
  members: PortalMember[];
}) {
  const c = p.conversation;
  const window = windowWords(c.windowExpiresAt, p.now);
  return (
    <>
      <div class="card-head">
        <h2 data-testid="thread-title">{titleOf(c)}</h2>
        <Badge tone={window.open ? 'ok' : 'neutral'} testid="window">
          {window.words}
        </Badge>
      </div>
      {c.name && <p class="muted thread-phone">{c.phone}</p>}
      <p class="badges" data-testid="work-badges">
        <WorkBadges conversation={c} members={p.members} />
      </p>
      <WorkForm conversation={c} members={p.members} csrfToken={p.csrfToken} now={p.now} />
      {c.unreadCount > 0 && (
        // Sent by /assets/inbox.js once the thread is shown (a GET never marks read).
        <form method="post" action={`/inbox/${c.id}/read`} data-mark-read hidden>
          <input type="hidden" name="csrf" value={p.csrfToken} />
        </form>
      )}
      {p.olderHref && (
        <p>
          <a href={p.olderHref}>Older messages</a>
        </p>
      )}
      <ThreadMessages
        conversationId={c.id}
        messages={p.messages}
        now={p.now}
        csrfToken={p.csrfToken}
        windowOpen={window.open}
      />
      <ThreadNotes notes={p.notes} members={p.members} now={p.now} />
    </>
  );
}

export interface InboxPageProps {
  signedIn: { email: string; csrfToken: string };
  now: Date;
  list: { items: InboxConversation[]; nextCursor: string | null };
  /** The open conversation, or null on `/inbox`. */
  open: {
    conversation: InboxConversation;
    messages: InboxMessage[];
    notes: Note[];
    olderHref: string | null;
    reply: ReplyView;
    /** A refused private note. */
    note?: NoteFormView | undefined;
  } | null;
  /** Why the list could not be read (storage fine, the messaging engine not). */
  problem?: ComponentChildren;
  /** The portal's members (assignees). */
  members: PortalMember[];
  /** The list's filters. */
  listQuery: InboxListQuery;
}

/** The whole page; `data-*` attributes tell inbox.js which fragments to refresh. */
export function InboxPage(p: InboxPageProps) {
  const currentId = p.open?.conversation.id ?? null;
  const qs = listQueryString(p.listQuery);
  const fragmentQuery = [currentId ? `current=${currentId}` : '', qs].filter((x) => x).join('&');
  const listFragment = `/inbox/fragments/list${fragmentQuery ? `?${fragmentQuery}` : ''}`;
  return (
    <Layout title="Inbox" signedIn={p.signedIn} current="inbox" scripts={['/assets/inbox.js']} wide>
      <PageHeader
        title="Inbox"
        lead="What people wrote to your business numbers, and your replies."
        actions={
          <ButtonLink href="/messages" kind="secondary">
            Messages and reports
          </ButtonLink>
        }
      />
      <p class="sr-only" aria-live="polite" id="inbox-status" data-testid="inbox-status" />
      <SplitView
        showing={p.open ? 'detail' : 'list'}
        listLabel="Conversations"
        backHref="/inbox"
        backLabel="All conversations"
        list={
          <>
            <ListFilters query={p.listQuery} />
            <div id="inbox-list" data-fragment={listFragment} data-events="/inbox/events">
              <ConversationsPane
                items={p.list.items}
                currentId={currentId}
                nextCursor={p.list.nextCursor}
                now={p.now}
                members={p.members}
                listQuery={qs}
              />
            </div>
          </>
        }
        detail={
          p.open ? (
            <Card testid="conversation">
              <div
                id="inbox-thread"
                data-conversation={currentId}
                data-fragment={`/inbox/${currentId}/fragments/thread`}
              >
                <ThreadPane
                  conversation={p.open.conversation}
                  messages={p.open.messages}
                  notes={p.open.notes}
                  olderHref={p.open.olderHref}
                  now={p.now}
                  csrfToken={p.signedIn.csrfToken}
                  members={p.members}
                />
              </div>
              <ReplyBox view={p.open.reply} csrfToken={p.signedIn.csrfToken} />
              <NoteForm
                conversationId={p.open.conversation.id}
                csrfToken={p.signedIn.csrfToken}
                view={p.open.note}
              />
            </Card>
          ) : (
            <EmptyState title="Choose a conversation to read it and reply." />
          )
        }
      />
    </Layout>
  );
}
