/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * How the team works a conversation on `/inbox`: the thread's form (status, snooze, assignee,
 * labels; posted to `/inbox/{conversationId}/work`) and the list's filters (mine, unassigned,
 * all; by status and label), on the page kit. The form's values become the API's change
 * (`PATCH /messaging/conversations/{id}`'s body) here, so the page and the API share one set of
 * rules (messaging's conversation-work.ts).
 *
 * @see docs/messaging.md "Inbox", "Working a conversation"
 */
import { memberId } from '../../accounts/member-id.ts';
import type { PortalMember } from '../../accounts/portal-members.ts';
import { Badge, Button, Field } from '../../browser/kit.tsx';
import type { ConversationUpdate } from '../../messaging/conversations/conversations-schemas.ts';
import { LABEL_MAX, LABELS_MAX } from '../../messaging/conversations/conversations-schemas.ts';
import { hasControlCharacters } from '../../platform/plain-text.ts';
import type { InboxFilter } from '../inbox-reads.ts';
import type { InboxConversation } from './inbox-view.ts';

const HOUR_MS = 3_600_000;
/** The snoozes offered: the form's value and how long it lasts. */
const SNOOZES: Record<string, { label: string; ms: number }> = {
  'snooze-1h': { label: 'Snooze 1 hour', ms: HOUR_MS },
  'snooze-1d': { label: 'Snooze 1 day', ms: 24 * HOUR_MS },
  'snooze-1w': { label: 'Snooze 1 week', ms: 7 * 24 * HOUR_MS },
};
const STATUS_WORDS = { open: 'Open', pending: 'Pending', resolved: 'Resolved', snoozed: 'Snoozed' };
const STATUSES = ['open', 'pending', 'resolved', 'snoozed'] as const;
type Status = (typeof STATUSES)[number];
const isStatus = (v: string | undefined): v is Status =>
  v !== undefined && (STATUSES as readonly string[]).includes(v);

/** The list's views: whose conversations. */
export type InboxView = 'all' | 'mine' | 'unassigned';

/** The list's filters as the page's query has them (each optional, unknown values ignored). */
export interface InboxListQuery {
  view?: string | undefined;
  status?: string | undefined;
  label?: string | undefined;
}

/** The API filter of a list query, for member `userId`. */
export function filterOf(q: InboxListQuery, userId: number): InboxFilter {
  const label = q.label?.trim();
  return {
    ...(q.view === 'mine' && { assigneeId: memberId(userId) }),
    ...(q.view === 'unassigned' && { assigneeId: 'none' }),
    ...(isStatus(q.status) && { status: q.status }),
    ...(label && label.length <= LABEL_MAX && { label }),
  };
}

/** The list query as a query string (`view=mine&status=open`), empty when nothing is set. */
export function listQueryString(q: InboxListQuery): string {
  const params = new URLSearchParams();
  if (q.view === 'mine' || q.view === 'unassigned') params.set('view', q.view);
  if (isStatus(q.status)) params.set('status', q.status);
  const label = q.label?.trim();
  if (label) params.set('label', label);
  return params.toString();
}

/** The list's filters: the three views as links, status and label as a GET form. */
export function ListFilters(p: { query: InboxListQuery }) {
  const view: InboxView =
    p.query.view === 'mine' || p.query.view === 'unassigned' ? p.query.view : 'all';
  const href = (v: InboxView) => {
    const qs = listQueryString({ ...p.query, view: v });
    return qs ? `/inbox?${qs}` : '/inbox';
  };
  const views: [InboxView, string][] = [
    ['mine', 'Mine'],
    ['unassigned', 'Unassigned'],
    ['all', 'All'],
  ];
  return (
    <div data-testid="inbox-filters">
      <nav aria-label="Whose conversations" class="view-links">
        {views.map(([v, words]) => (
          <a
            key={v}
            href={href(v)}
            aria-current={v === view ? 'page' : undefined}
            data-testid={`view-${v}`}
          >
            {words}
          </a>
        ))}
      </nav>
      <form method="get" action="/inbox" class="filters" role="search">
        {view !== 'all' && <input type="hidden" name="view" value={view} />}
        <Field
          name="status"
          id="filter-status"
          label="Status"
          value={isStatus(p.query.status) ? p.query.status : ''}
          options={[
            { value: '', label: 'Any status' },
            ...STATUSES.map((s) => ({ value: s, label: STATUS_WORDS[s] })),
          ]}
        />
        <Field
          name="label"
          id="filter-label"
          label="Label"
          value={p.query.label ?? ''}
          maxLength={LABEL_MAX}
        />
        <Button kind="secondary" testid="filter-apply">
          Filter
        </Button>
      </form>
    </div>
  );
}

/** The status, assignee and labels of a conversation, as badges (the list's row, the thread). */
export function WorkBadges(p: { conversation: InboxConversation; members: PortalMember[] | null }) {
  const c = p.conversation;
  const assignee = c.assigneeId
    ? (p.members?.find((m) => m.id === c.assigneeId)?.email ?? c.assigneeId)
    : null;
  return (
    <>
      <Badge tone={c.status === 'open' ? 'info' : 'neutral'} testid="status">
        {STATUS_WORDS[c.status]}
      </Badge>
      {assignee && <Badge tone="neutral" testid="assignee">{`Assigned: ${assignee}`}</Badge>}
      {c.labels.map((l) => (
        <Badge key={l} tone="neutral" testid="label">
          {l}
        </Badge>
      ))}
    </>
  );
}

/** The thread's form: status (or a snooze), assignee and labels. */
export function WorkForm(p: {
  conversation: InboxConversation;
  members: PortalMember[];
  csrfToken: string;
  now: Date;
}) {
  const c = p.conversation;
  const statusOptions = [
    ...(['open', 'pending', 'resolved'] as const).map((s) => ({
      value: s,
      label: STATUS_WORDS[s],
    })),
    ...(c.status === 'snoozed' && c.snoozedUntil
      ? [{ value: 'snoozed', label: `Snoozed until ${new Date(c.snoozedUntil).toUTCString()}` }]
      : []),
    ...Object.entries(SNOOZES).map(([value, s]) => ({ value, label: s.label })),
  ];
  return (
    <form
      method="post"
      action={`/inbox/${c.id}/work`}
      class="filters"
      data-testid="work-form"
      aria-label="Status, assignee and labels"
    >
      <input type="hidden" name="csrf" value={p.csrfToken} />
      <Field
        name="status"
        id="work-status"
        label="Status"
        value={c.status}
        options={statusOptions}
      />
      <Field
        name="assignee"
        id="work-assignee"
        label="Assignee"
        value={c.assigneeId ?? ''}
        options={[
          { value: '', label: 'Nobody' },
          ...p.members.map((m) => ({ value: m.id, label: m.email })),
        ]}
      />
      <Field
        name="labels"
        id="work-labels"
        label="Labels"
        value={c.labels.join(', ')}
        help="Separated by commas."
        maxLength={LABELS_MAX * (LABEL_MAX + 2)}
      />
      <Button kind="secondary" testid="work-save">
        Save
      </Button>
    </form>
  );
}

/** The work form as posted. */
export interface WorkFormBody {
  status?: string | undefined;
  assignee?: string | undefined;
  labels?: string | undefined;
}

/**
 * The API's change for a posted work form.
 *
 * @returns the change, or the words of what is wrong (nothing is changed then).
 */
export function updateOf(
  body: WorkFormBody,
  now: Date,
): { update: ConversationUpdate } | { error: string } {
  const update: ConversationUpdate = {};
  const snooze = body.status ? SNOOZES[body.status] : undefined;
  if (snooze) {
    update.status = 'snoozed';
    update.snoozedUntil = new Date(now.getTime() + snooze.ms).toISOString();
  } else if (body.status === 'open' || body.status === 'pending' || body.status === 'resolved') {
    update.status = body.status;
  } else if (body.status !== undefined && body.status !== 'snoozed') {
    return { error: 'Choose a status from the list.' };
  }
  if (body.assignee !== undefined) {
    if (body.assignee !== '' && !/^usr_[1-9][0-9]{0,9}$/.test(body.assignee))
      return { error: 'Choose an assignee from the list.' };
    update.assigneeId = body.assignee === '' ? null : body.assignee;
  }
  if (body.labels !== undefined) {
    const labels = [...new Set(body.labels.split(',').map((l) => l.trim()))].filter((l) => l);
    if (labels.length > LABELS_MAX) return { error: `At most ${LABELS_MAX} labels.` };
    if (labels.some((l) => [...l].length > LABEL_MAX || hasControlCharacters(l)))
      return { error: `A label is 1–${LABEL_MAX} characters of plain text.` };
    update.labels = labels;
  }
  return { update };
}
