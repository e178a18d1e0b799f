/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/settings/webhooks` on the page kit: endpoints (each with "Replay since…"), the add form, the
 * credit alert, the replays with their progress, the delivery history (webhook-deliveries.tsx),
 * and the confirmation step of removing an endpoint.
 */
import { ErrorFlash, Flash, type FlashCounts, type FlashKey } from '../../../browser/flash.tsx';
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
} from '../../../browser/kit.tsx';
import { Layout } from '../../../browser/layout.tsx';
import { EVENT_TYPES } from '../../../webhooks/webhook-events.ts';
import type { WebhookEndpoint } from '../../../webhooks/webhooks-service.ts';
import {
  DeliveriesTable,
  HistoryFilter,
  HistoryPager,
  ReplayForm,
  ReplaysTable,
  when,
  type DeliveryHistoryProps,
} from './webhook-deliveries.tsx';

export interface WebhooksPageProps extends DeliveryHistoryProps {
  email: string;
  endpoints: WebhookEndpoint[];
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
        lead="Events sent to your systems, signed as Standard Webhooks specifies (the webhook receiver how-to in the docs shows a receiver). At least once; ordering is not promised."
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
