/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/settings/webhooks` on the page kit: endpoints (each with "Replay since…"), the add form, the
 * credit alert, the replays with their progress, the delivery history (50 a page, newest first,
 * filtered by status), and the confirmation step of removing an endpoint.
 */
import { ErrorFlash, Flash, type FlashCounts, type FlashKey } from '../../browser/flash.tsx';
import {
  Badge,
  Button,
  ButtonLink,
  Card,
  ConfirmStep,
  DataTable,
  EmptyState,
  Field,
  PageHeader,
  PostButton,
} from '../../browser/kit.tsx';
import { Layout } from '../../browser/layout.tsx';
import { EVENT_TYPES } from '../../webhooks/webhook-events.ts';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../webhooks/delivery-history.ts';
import type { WebhookReplay } from '../../webhooks/webhook-replay.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../../webhooks/webhooks-service.ts';

export interface WebhooksPageProps {
  email: string;
  csrfToken: string;
  endpoints: WebhookEndpoint[];
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
  creditLowThreshold: number | null;
  /** A secret made by the last add or rotate: shown once. */
  newSecret?: { endpointId: string; secret: string; until?: string | undefined } | undefined;
  /** The outcome of the last action (`?done=` key). */
  flash?: { key: FlashKey; counts: FlashCounts } | null | undefined;
  /** A sentence from the service about the last change (e.g. an allowed http:// URL). */
  notice?: string | undefined;
  /** An error that concerns no single field. */
  error?: string | undefined;
  /** The add form as typed, with the error beside its field. */
  addForm?: { url: string; events: string[]; urlError?: string; eventsError?: string } | undefined;
  /** The credit alert form as typed, with its error. */
  thresholdForm?: { value: string; error: string } | undefined;
}

const when = (iso: string | null) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : '');

function EndpointsTable({ p }: { p: WebhooksPageProps }) {
  if (p.endpoints.length === 0)
    return (
      <EmptyState title="No endpoints yet." action={{ href: '#add', label: 'Add an endpoint' }}>
        Add the HTTPS address of your receiver to get events as they happen.
      </EmptyState>
    );
  return (
    <DataTable
      testid="endpoints"
      rows={p.endpoints}
      rowKey={(e) => e.id}
      columns={[
        {
          label: 'Endpoint',
          kind: 'long',
          cell: (e) => (
            <>
              <code>{e.url}</code>
              <br />
              <span class="id">{e.id}</span>
            </>
          ),
        },
        { label: 'Events', kind: 'text', cell: (e) => e.eventTypes.join(', ') },
        {
          label: 'State',
          kind: 'text',
          cell: (e) => (
            <>
              {e.enabled ? (
                <Badge tone="ok">enabled</Badge>
              ) : (
                <>
                  <Badge tone="bad">disabled</Badge> <span class="muted">{e.disabledReason}</span>
                </>
              )}
              {e.previousSecretValidUntil && (
                <p class="muted">Previous secret signs until {when(e.previousSecretValidUntil)}.</p>
              )}
            </>
          ),
        },
        {
          label: 'Actions',
          kind: 'text',
          cell: (e) => (
            <div class="row-actions">
              <PostButton
                action={`/settings/webhooks/${e.id}/${e.enabled ? 'test' : 'enable'}`}
                csrf={p.csrfToken}
              >
                {e.enabled ? 'Send test event' : 'Enable'}
              </PostButton>
              <PostButton action={`/settings/webhooks/${e.id}/rotate`} csrf={p.csrfToken}>
                Rotate secret
              </PostButton>
              <ButtonLink href={`/settings/webhooks/${e.id}/remove`} kind="danger">
                Remove
              </ButtonLink>
              {e.enabled && <ReplayForm endpoint={e} csrf={p.csrfToken} />}
            </div>
          ),
        },
      ]}
    />
  );
}

/** "Replay since…": a time (UTC) and failed-only, in a disclosure beside the endpoint. */
function ReplayForm({ endpoint, csrf }: { endpoint: WebhookEndpoint; csrf: string }) {
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
function ReplaysTable({ p }: { p: WebhooksPageProps }) {
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
function HistoryFilter({ p }: { p: WebhooksPageProps }) {
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

function HistoryPager({ p }: { p: WebhooksPageProps }) {
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

function DeliveriesTable({ p }: { p: WebhooksPageProps }) {
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

function NewSecret({ s }: { s: NonNullable<WebhooksPageProps['newSecret']> }) {
  return (
    <div class="warning" role="status">
      <p class="ok">
        Signing secret of {s.endpointId}. Copy it now: it is shown only this once.
        {s.until && ` The previous secret also signs until ${when(s.until)}.`}
      </p>
      <code class="secret" data-testid="new-secret">
        {s.secret}
      </code>
    </div>
  );
}

function AddForm({ p }: { p: WebhooksPageProps }) {
  const f = p.addForm;
  return (
    <form method="post" action="/settings/webhooks" id="add">
      <h3>Add an endpoint</h3>
      <input type="hidden" name="csrf" value={p.csrfToken} />
      <Field
        name="url"
        label="URL"
        type="url"
        required
        maxLength={2048}
        value={f?.url}
        error={f?.urlError}
        help="The HTTPS address that receives the events (POST, signed)."
      />
      <fieldset aria-describedby={f?.eventsError ? 'events-error' : undefined}>
        <legend>Events</legend>
        {EVENT_TYPES.map((type) => (
          <label key={type} class="check">
            <input type="checkbox" name="events" value={type} checked={f?.events.includes(type)} />{' '}
            {type}
          </label>
        ))}
        {f?.eventsError && (
          <p class="field-error error" id="events-error">
            {f.eventsError}
          </p>
        )}
      </fieldset>
      <Button>Add endpoint</Button>
    </form>
  );
}

/** `/settings/webhooks`: endpoints, recent deliveries, and the forms that change them. */
export function WebhooksPage(p: WebhooksPageProps) {
  const threshold =
    p.thresholdForm?.value ?? (p.creditLowThreshold === null ? '' : String(p.creditLowThreshold));
  return (
    <Layout
      title="Webhooks"
      signedIn={{ email: p.email, csrfToken: p.csrfToken }}
      current="webhooks"
      wide
    >
      <PageHeader
        title="Webhooks"
        lead="Events sent to your systems, signed as Standard Webhooks specifies (see the README for a receiver). At least once; ordering is not promised."
      />
      <Flash flash={p.flash} />
      {p.notice && (
        <div class="flash flash-info" role="status">
          <p>{p.notice}</p>
        </div>
      )}
      <ErrorFlash>{p.error}</ErrorFlash>
      {p.newSecret && <NewSecret s={p.newSecret} />}
      <Card title="Endpoints">
        <EndpointsTable p={p} />
        <AddForm p={p} />
      </Card>
      <Card title="Credit alert">
        <form method="post" action="/settings/webhooks/credit-threshold">
          <input type="hidden" name="csrf" value={p.csrfToken} />
          <Field
            name="threshold"
            label="Send credit.low when the available credit falls below"
            type="number"
            min={0}
            value={threshold}
            error={p.thresholdForm?.error}
            help="In minor units (cents); empty: never."
          />
          <Button>Save</Button>
        </form>
      </Card>
      <Card
        title="Replays"
        id="replays"
        actions={
          <ButtonLink href="/settings/webhooks#replays" kind="secondary">
            Refresh progress
          </ButtonLink>
        }
      >
        <ReplaysTable p={p} />
      </Card>
      <Card title="Deliveries" id="deliveries">
        <HistoryFilter p={p} />
        <DeliveriesTable p={p} />
        <HistoryPager p={p} />
      </Card>
    </Layout>
  );
}

/** The confirmation step of removing an endpoint. */
export function ConfirmRemovePage(p: {
  email: string;
  csrfToken: string;
  endpoint: WebhookEndpoint;
}) {
  return (
    <Layout title="Remove endpoint" signedIn={p} current="webhooks">
      <ConfirmStep
        title="Remove this endpoint?"
        csrfToken={p.csrfToken}
        action={`/settings/webhooks/${p.endpoint.id}/remove`}
        confirmLabel="Remove endpoint"
        cancelHref="/settings/webhooks"
        cancelLabel="Cancel"
      >
        <p>
          <code>{p.endpoint.url}</code>
        </p>
        <p>
          It stops receiving events at once, and <strong>its delivery history is deleted</strong>.
          Pending retries are dropped. This cannot be undone; you can add the URL again later (with
          a new secret).
        </p>
      </ConfirmStep>
    </Layout>
  );
}
