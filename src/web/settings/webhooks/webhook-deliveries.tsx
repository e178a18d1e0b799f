/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The delivery side of `/settings/webhooks` (webhooks-page.tsx): "Replay since…" beside an
 * endpoint, the replays with their progress, and the delivery history (50 a page, newest first,
 * filtered by status).
 */
import { Badge, Button, DataTable, EmptyState, Field, PostButton } from '../../../browser/kit.tsx';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../../webhooks/delivery-history.ts';
import type { WebhookReplay } from '../../../webhooks/webhook-replay.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../../../webhooks/webhooks-service.ts';

/** What the delivery side of the page shows. */
export interface DeliveryHistoryProps {
  csrfToken: string;
  /** A page of the delivery history, newest first. */
  deliveries: WebhookDelivery[];
  /** The history's status filter, the page's cursor and the next page's (null: the last). */
  history?:
    | {
        status: DeliveryStatus | undefined;
        after: string | undefined;
        nextCursor?: string | null | undefined;
      }
    | undefined;
  /** The latest replays, newest first, with their progress. */
  replays: WebhookReplay[];
}

/** An ISO time as `YYYY-MM-DD HH:MM:SS UTC`; empty for none. */
export const when = (iso: string | null) =>
  iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : '';

export function ReplayForm({ endpoint, csrf }: { endpoint: WebhookEndpoint; csrf: string }) {
  const id = `replay-${endpoint.id}`;
  return (
    <details class="replay" data-testid={`replay-${endpoint.id}`}>
      <summary>Replay since…</summary>
      <form method="post" action={`/settings/webhooks/${endpoint.id}/replay`}>
        <input type="hidden" name="csrf" value={csrf} />
        <Field
          name="since"
          id={`${id}-since`}
          label="Since (UTC)"
          type="datetime-local"
          required
          help="Its events from then on are sent again, with the same ids."
        />
        <label class="check">
          <input type="checkbox" name="failedOnly" value="yes" /> Only events that did not reach it
        </label>
        <Button kind="secondary">Replay</Button>
      </form>
    </details>
  );
}

/** The latest replays and their progress (a reload shows it anew). */
export function ReplaysTable({ p }: { p: DeliveryHistoryProps }) {
  if (p.replays.length === 0)
    return (
      <EmptyState title="No replays yet.">
        “Replay since…” beside an endpoint sends its events from a time on again.
      </EmptyState>
    );
  return (
    <DataTable
      testid="replays"
      rows={p.replays}
      rowKey={(r) => r.id}
      columns={[
        { label: 'Started', cell: (r) => when(r.createdAt) },
        { label: 'Endpoint', kind: 'long', cell: (r) => <span class="id">{r.endpointId}</span> },
        {
          label: 'Range',
          kind: 'text',
          cell: (r) =>
            (r.criteria.since ? `since ${when(r.criteria.since)}` : 'from a cursor') +
            (r.criteria.failedOnly ? ', failed only' : ''),
        },
        {
          label: 'Progress',
          kind: 'text',
          cell: (r) => {
            const done = r.progress.succeeded + r.progress.failed;
            return (
              <>
                <progress
                  max={Math.max(r.eventCount, 1)}
                  value={r.eventCount === 0 ? 1 : done}
                  aria-label={`Replay ${r.id}: ${done} of ${r.eventCount} done`}
                />
                <br />
                <span data-testid="replay-progress">
                  {done} of {r.eventCount} done: {r.progress.succeeded} delivered,{' '}
                  {r.progress.failed} failed, {r.progress.pending} pending
                </span>
              </>
            );
          },
        },
        {
          label: 'State',
          cell: (r) => <Badge tone={r.status === 'finished' ? 'ok' : 'warn'}>{r.status}</Badge>,
        },
      ]}
    />
  );
}

/** The status filter of the history (a GET form) and its pager. */
export function HistoryFilter({ p }: { p: DeliveryHistoryProps }) {
  return (
    <form method="get" action="/settings/webhooks#deliveries" class="filters">
      <Field
        name="status"
        label="Status"
        value={p.history?.status ?? ''}
        options={[
          { value: '', label: 'All' },
          ...DELIVERY_STATUSES.map((s) => ({ value: s, label: s })),
        ]}
      />
      <Button kind="secondary" testid="filter-deliveries">
        Show
      </Button>
    </form>
  );
}

export function HistoryPager({ p }: { p: DeliveryHistoryProps }) {
  const h = p.history;
  const status = h?.status ? `status=${h.status}&` : '';
  if (!h?.after && !h?.nextCursor) return null;
  return (
    <p class="pager">
      {h.after && (
        <a href={`/settings/webhooks?${status}#deliveries`} data-testid="newest-deliveries">
          Newest deliveries
        </a>
      )}
      {h.nextCursor && (
        <a
          href={`/settings/webhooks?${status}after=${encodeURIComponent(h.nextCursor)}#deliveries`}
          data-testid="older-deliveries"
        >
          Older deliveries
        </a>
      )}
    </p>
  );
}

export function DeliveriesTable({ p }: { p: DeliveryHistoryProps }) {
  if (p.deliveries.length === 0)
    return (
      <EmptyState
        title={p.history?.status ? `No ${p.history.status} deliveries.` : 'No deliveries yet.'}
      >
        Each event sent to an endpoint appears here; “Send test event” sends one now.
      </EmptyState>
    );
  const tone = (s: string) => (s === 'succeeded' ? 'ok' : s === 'failed' ? 'bad' : 'warn');
  return (
    <DataTable
      testid="deliveries"
      rows={p.deliveries}
      rowKey={(d) => d.id}
      columns={[
        { label: 'Created', cell: (d) => when(d.createdAt) },
        { label: 'Event', cell: (d) => d.eventType },
        { label: 'Endpoint', kind: 'long', cell: (d) => <span class="id">{d.endpointId}</span> },
        {
          label: 'Status',
          kind: 'text',
          cell: (d) => (
            <>
              <Badge tone={tone(d.status)}>{d.status}</Badge>
              {d.lastError && <span class="muted"> {d.lastError}</span>}
            </>
          ),
        },
        { label: 'Code', cell: (d) => String(d.lastStatusCode ?? '') },
        { label: 'Attempts', cell: (d) => String(d.attempts) },
        {
          label: 'Latency',
          cell: (d) => (d.lastLatencyMs === null ? '' : `${d.lastLatencyMs} ms`),
        },
        { label: 'Next retry', cell: (d) => (d.status === 'pending' ? when(d.nextAttemptAt) : '') },
        {
          label: 'Actions',
          cell: (d) => (
            <div class="row-actions">
              <PostButton
                action={`/settings/webhooks/deliveries/${d.id}/resend`}
                csrf={p.csrfToken}
              >
                Resend
              </PostButton>
            </div>
          ),
        },
      ]}
    />
  );
}
