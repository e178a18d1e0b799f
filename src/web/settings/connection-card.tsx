/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The connection card of `/settings`: what is connected (the provider by name, the business
 * accounts and their phone numbers, the permissions granted against what Portico asked for,
 * when the access expires and was last checked), each number's onboarding (webhooks subscribed,
 * registered, the last error and the next allowed attempt) with Retry, and Reconnect /
 * Disconnect for an administrator. Never any token material.
 *
 * @see docs/partner-connection.md "Onboarding"
 */
import type { ConnectionSummary } from '../../partner/connection-summary.ts';
import { Badge, PostButton } from '../../browser/kit.tsx';
import type { BusinessAccountListing } from '../web-options.ts';
import { utcWords } from '../audit/audit-words.ts';

export interface ConnectionCardProps {
  providerName: string;
  /** null: the status could not be read. */
  connection: ConnectionSummary | null;
  /** Business accounts by name (the Cloud API listing); null when not available. */
  businessAccounts: readonly BusinessAccountListing[] | null;
  isMainAdmin: boolean;
  csrfToken: string;
}

type Listed = BusinessAccountListing['phoneNumbers'][number];

/** Whether the number may send: both onboarding steps done. */
const ready = (n: Listed) => n.onboarding?.webhooksSubscribed && n.onboarding.registered;

/** A number's onboarding: Ready, or what is missing with the last error and next attempt. */
function Onboarding({ n }: { n: Listed }) {
  const o = n.onboarding;
  if (!o) return null;
  if (ready(n))
    return (
      <Badge tone="ok" testid="onboarding-state">
        Ready
      </Badge>
    );
  const missing = [
    ...(o.webhooksSubscribed ? [] : ['webhooks not subscribed']),
    ...(o.registered ? [] : ['not registered']),
  ];
  return (
    <>
      <Badge tone="warn" testid="onboarding-state">
        Not ready: {missing.join(', ')}
      </Badge>
      {o.lastError && (
        <span class="error" data-testid="onboarding-error">
          {' '}
          {o.lastError}
        </span>
      )}
      {o.nextAttemptAt && (
        <span class="muted" data-testid="onboarding-next">
          {' '}
          Next attempt allowed {utcWords(o.nextAttemptAt)}.
        </span>
      )}
    </>
  );
}

function OnlyMainAdmin() {
  return (
    <p class="muted" data-testid="connection-admin-only">
      Only an administrator can connect or disconnect the provider account.
    </p>
  );
}

function BusinessAccounts(p: {
  assetIds: readonly string[];
  listing: readonly BusinessAccountListing[] | null;
}) {
  if (p.listing && p.listing.length > 0) {
    return (
      <ul class="plain" data-testid="business-accounts">
        {p.listing.map((a) => (
          <li key={a.wabaId}>
            {a.name ?? 'Business account'} <small class="id">WABA {a.wabaId}</small>
            {a.phoneNumbers.length > 0 && (
              <ul>
                {a.phoneNumbers.map((n) => (
                  <li key={n.phoneNumberId}>
                    {n.displayPhoneNumber}
                    {n.verifiedName ? ` · ${n.verifiedName}` : ''}{' '}
                    <small class="id">id {n.phoneNumberId}</small> <Onboarding n={n} />
                    {n.messagingLimit && (
                      <small class="muted" data-testid="messaging-limit">
                        {' '}
                        · {n.messagingLimit}
                      </small>
                    )}
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
    );
  }
  if (p.assetIds.length === 0) return <p class="muted">No business account was shared.</p>;
  return (
    <>
      <ul class="plain" data-testid="business-accounts">
        {p.assetIds.map((id) => (
          <li key={id}>
            Business account <small class="id">WABA {id}</small>
          </li>
        ))}
      </ul>
      <p class="muted">Names and phone numbers appear here once Portico reads them.</p>
    </>
  );
}

function Permissions({ permissions }: { permissions: ConnectionSummaryActive['permissions'] }) {
  return (
    <ul class="plain" data-testid="permissions">
      {permissions.map((p) => (
        <li key={p.permission}>
          {p.granted ? '✓ ' : '✗ '}
          {p.capability} <small class="id">{p.permission}</small>
          {!p.granted && <span class="error"> not granted</span>}
          {!p.requested && <span class="muted"> (granted, not asked for)</span>}
        </li>
      ))}
    </ul>
  );
}

type ConnectionSummaryActive = Extract<ConnectionSummary, { status: 'active' }>;

export function ConnectionCard({
  providerName,
  connection,
  businessAccounts,
  isMainAdmin,
  csrfToken,
}: ConnectionCardProps) {
  const notReady = (businessAccounts ?? []).some((a) => a.phoneNumbers.some((n) => !ready(n)));
  if (connection === null) {
    return <p class="error">The connection status cannot be read just now. Reload in a moment.</p>;
  }
  if (connection.status !== 'active') {
    return (
      <>
        <p data-testid="connection-status">Not connected to {providerName}</p>
        {connection.revokedAt && (
          <p class="muted">
            Disconnected {utcWords(connection.revokedAt)}
            {connection.revokeReason ? ` (${connection.revokeReason})` : ''}.
          </p>
        )}
        {isMainAdmin ? (
          <p>
            <a class="button" href="/connect">
              Connect {providerName}
            </a>
          </p>
        ) : (
          <OnlyMainAdmin />
        )}
      </>
    );
  }
  return (
    <>
      <p class="ok" data-testid="connection-status">
        Connected to {providerName}
      </p>
      <dl class="facts">
        <dt>Connected</dt>
        <dd>
          {utcWords(connection.connectedAt)}
          {connection.connectedBy ? `, by ${connection.connectedBy.email}` : ''}
        </dd>
        <dt>Access expires</dt>
        <dd data-testid="token-expires">
          {connection.tokenExpiresAt ? utcWords(connection.tokenExpiresAt) : 'Does not expire'}
          <span class="muted"> · renewed automatically before it does</span>
        </dd>
        <dt>Last checked</dt>
        <dd data-testid="last-checked">
          {connection.lastCheckedAt
            ? utcWords(connection.lastCheckedAt)
            : 'Not yet (Portico checks the access periodically)'}
        </dd>
      </dl>
      <h3>Business accounts</h3>
      <BusinessAccounts assetIds={connection.assetIds} listing={businessAccounts} />
      {notReady && isMainAdmin && (
        <div data-testid="onboarding-retry">
          <p class="muted">
            A number sends and receives once Portico’s app is subscribed to its business account’s
            webhooks and the number is registered.
          </p>
          <PostButton action="/settings/onboarding" csrf={csrfToken}>
            Retry onboarding
          </PostButton>
        </div>
      )}
      <h3>What Portico may do</h3>
      <Permissions permissions={connection.permissions} />
      {isMainAdmin ? (
        <div class="actions">
          <a class="button" href="/connect?reconnect=1" data-testid="reconnect">
            Reconnect
          </a>
          <a class="button danger" href="/settings/disconnect" data-testid="disconnect">
            Disconnect
          </a>
        </div>
      ) : (
        <OnlyMainAdmin />
      )}
      {isMainAdmin && (
        <p class="muted">
          Reconnect replaces this connection in place (for example to share another business
          account); the current one keeps working until the new one is made.
        </p>
      )}
    </>
  );
}
