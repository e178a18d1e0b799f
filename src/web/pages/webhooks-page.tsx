/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { Layout } from '../../browser/layout.tsx';
import { EVENT_TYPES } from '../../webhooks/webhook-events.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../../webhooks/webhooks-service.ts';

export interface WebhooksPageProps {
  email: string;
  csrfToken: string;
  endpoints: WebhookEndpoint[];
  deliveries: WebhookDelivery[];
  creditLowThreshold: number | null;
  /** A secret made by this very request (add or rotate): shown once. */
  newSecret?: { endpointId: string; secret: string; until?: string } | undefined;
  notice?: string | undefined;
  error?: string | undefined;
}

const when = (iso: string | null) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : '');

function PostButton(p: { action: string; csrf: string; label: string; danger?: boolean }) {
  return (
    <form method="post" action={p.action} class="inline">
      <input type="hidden" name="csrf" value={p.csrf} />
      <button type="submit" class={p.danger ? 'danger' : undefined}>
        {p.label}
      </button>
    </form>
  );
}

function EndpointsTable({ p }: { p: WebhooksPageProps }) {
  if (p.endpoints.length === 0) return <p class="muted">No endpoints yet.</p>;
  return (
    <table data-testid="endpoints">
      <thead>
        <tr>
          <th>Endpoint</th>
          <th>Events</th>
          <th>State</th>
          <th>Actions</th>
        </tr>
      </thead>
      <tbody>
        {p.endpoints.map((e) => (
          <tr key={e.id}>
            <td>
              <code>{e.url}</code>
              <br />
              <span class="muted">{e.id}</span>
            </td>
            <td>{e.eventTypes.join(', ')}</td>
            <td>
              {e.enabled ? 'enabled' : <span class="error">disabled: {e.disabledReason}</span>}
              {e.previousSecretValidUntil && (
                <p class="muted">Previous secret signs until {when(e.previousSecretValidUntil)}.</p>
              )}
            </td>
            <td>
              {e.enabled ? (
                <PostButton
                  action={`/settings/webhooks/${e.id}/test`}
                  csrf={p.csrfToken}
                  label="Send test event"
                />
              ) : (
                <PostButton
                  action={`/settings/webhooks/${e.id}/enable`}
                  csrf={p.csrfToken}
                  label="Enable"
                />
              )}
              <PostButton
                action={`/settings/webhooks/${e.id}/rotate`}
                csrf={p.csrfToken}
                label="Rotate secret"
              />
              <PostButton
                action={`/settings/webhooks/${e.id}/remove`}
                csrf={p.csrfToken}
                label="Remove"
                danger
              />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function DeliveriesTable({ p }: { p: WebhooksPageProps }) {
  if (p.deliveries.length === 0) return <p class="muted">No deliveries yet.</p>;
  return (
    <table data-testid="deliveries">
      <thead>
        <tr>
          <th>Created</th>
          <th>Event</th>
          <th>Endpoint</th>
          <th>Status</th>
          <th>Code</th>
          <th>Attempts</th>
          <th>Latency</th>
          <th>Next retry</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {p.deliveries.map((d) => (
          <tr key={d.id}>
            <td class="nowrap">{when(d.createdAt)}</td>
            <td>{d.eventType}</td>
            <td class="muted">{d.endpointId}</td>
            <td>
              {d.status}
              {d.lastError && <span class="muted"> ({d.lastError})</span>}
            </td>
            <td>{d.lastStatusCode ?? ''}</td>
            <td>{d.attempts}</td>
            <td>{d.lastLatencyMs === null ? '' : `${d.lastLatencyMs} ms`}</td>
            <td class="nowrap">{d.status === 'pending' ? when(d.nextAttemptAt) : ''}</td>
            <td>
              <PostButton
                action={`/settings/webhooks/deliveries/${d.id}/resend`}
                csrf={p.csrfToken}
                label="Resend"
              />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** `/settings/webhooks`: endpoints, recent deliveries, and the forms that change them. */
export function WebhooksPage(p: WebhooksPageProps) {
  return (
    <Layout title="Webhooks" signedIn={{ email: p.email, csrfToken: p.csrfToken }}>
      <h1>Webhooks</h1>
      <p>
        <a href="/settings">Back to settings</a> · Deliveries are signed as Standard Webhooks
        specifies; see the README for a receiver. Ordering is not promised; at-least-once is.
      </p>
      {p.notice && (
        <p class="ok" role="status">
          {p.notice}
        </p>
      )}
      {p.error && (
        <p class="error" role="alert">
          {p.error}
        </p>
      )}
      {p.newSecret && (
        <div role="status">
          <p class="ok">
            Signing secret of {p.newSecret.endpointId}. Copy it now: it is shown only this once.
            {p.newSecret.until &&
              ` The previous secret also signs until ${when(p.newSecret.until)}.`}
          </p>
          <code class="secret" data-testid="new-secret">
            {p.newSecret.secret}
          </code>
        </div>
      )}
      <section>
        <h2>Endpoints</h2>
        <EndpointsTable p={p} />
        <h3>Add an endpoint</h3>
        <form method="post" action="/settings/webhooks">
          <input type="hidden" name="csrf" value={p.csrfToken} />
          <label>
            URL <input type="url" name="url" required maxLength={2048} size={60} />
          </label>
          <fieldset>
            <legend>Events</legend>
            {EVENT_TYPES.map((type) => (
              <label key={type}>
                <input type="checkbox" name="events" value={type} /> {type}
              </label>
            ))}
          </fieldset>
          <button type="submit">Add endpoint</button>
        </form>
      </section>
      <section>
        <h2>Credit alert</h2>
        <form method="post" action="/settings/webhooks/credit-threshold">
          <input type="hidden" name="csrf" value={p.csrfToken} />
          <label>
            Send <code>credit.low</code> when the available credit falls below (minor units; empty:
            never){' '}
            <input
              type="number"
              name="threshold"
              min={0}
              value={p.creditLowThreshold === null ? '' : String(p.creditLowThreshold)}
            />
          </label>
          <button type="submit">Save</button>
        </form>
      </section>
      <section>
        <h2>Recent deliveries</h2>
        <DeliveriesTable p={p} />
      </section>
    </Layout>
  );
}
