/** @jsxRuntime automatic */
/** @jsxImportSource preact */
import { scopeWords } from '../../accounts/scopes.ts';
import { Flash, type FlashCounts, type FlashKey } from '../../browser/flash.tsx';
import { Note, PageHeader } from '../../browser/kit.tsx';
import type { StandingSignal } from '../../messaging/provider-webhooks/account-standing.ts';
import { Layout } from '../../browser/layout.tsx';
import { utcWords, type AuditRow } from '../audit/audit-words.ts';
import { AuditTable } from '../audit/audit-table.tsx';
import { ConnectionCard, type ConnectionCardProps } from './connection-card.tsx';
import {
  MessagingSettingsSection,
  type MessagingSettingsSectionProps,
} from './messaging-settings-form.tsx';

export interface SettingsPageProps {
  portal: { code: string; name: string };
  user: { id: number; email: string; isMainAdmin: boolean; isAdmin: boolean };
  /** The signed-in user's live sessions (browsers), this one included. */
  activeSessions: number;
  csrfToken: string;
  token: { hint: string; scopes: string[]; createdAt: string; lastUsedAt: string | null } | null;
  /** A token regenerated just before (taken from the session once): shown this once only. */
  newToken?: string | undefined;
  connection: Omit<ConnectionCardProps, 'isMainAdmin' | 'csrfToken'>;
  /** The most recent audit events, in the customer's words. */
  auditRows: readonly AuditRow[];
  /** Whether older events exist (link to /audit). */
  moreAudit: boolean;
  /** The outcome of the last action (`?done=` key from the flash vocabulary). */
  flash?: { key: FlashKey; counts: FlashCounts } | null | undefined;
  /** The "Messaging" section: the stored settings, or the form as typed with its errors. */
  messaging: Pick<MessagingSettingsSectionProps, 'settings' | 'form'>;
  /** The provider's account signals in force, newest first (the banner). */
  accountSignals?: readonly StandingSignal[] | undefined;
}

/**
 * The banner of the provider's account signals in force: restrictions, bans, violations, alerts,
 * capability and display-name decisions (docs/messaging.md "Account signals").
 */
function AccountSignalsBanner({ signals }: { signals: readonly StandingSignal[] }) {
  if (signals.length === 0) return null;
  const critical = signals.some((s) => s.severity === 'critical');
  return (
    <Note tone={critical ? 'bad' : 'warn'} testid="account-signals">
      <p>
        <strong>Your WhatsApp account</strong>: what the provider reported lately.
      </p>
      <ul class="plain">
        {signals.map((s) => (
          <li
            key={`${s.wabaId}-${s.occurredAt.toISOString()}-${s.event}`}
            data-severity={s.severity}
          >
            {s.summary} <small class="id">WABA {s.wabaId}</small>{' '}
            <small class="muted">{utcWords(s.occurredAt.toISOString())}</small>
          </li>
        ))}
      </ul>
    </Note>
  );
}

/** The one-time token: a read-only field that selects whole on click, and a copy button. */
function NewToken({ token }: { token: string }) {
  return (
    <div class="warning" role="status">
      <p class="ok">Your new API token. Copy it now: it is shown only this once.</p>
      <label for="new-token">API token</label>
      <input
        id="new-token"
        class="secret"
        type="text"
        readonly
        value={token}
        data-select-on-click
        data-testid="new-token"
        autocomplete="off"
        spellcheck={false}
      />
      <p class="actions">
        <button type="button" hidden data-copy-from="new-token" data-copy-status="copy-status">
          Copy
        </button>
        <span id="copy-status" class="muted" aria-live="polite">
          Click the field to select it all.
        </span>
      </p>
      <p class="muted">
        The previous token no longer works: give this one to every program that used it.
      </p>
    </div>
  );
}

function ApiToken(p: SettingsPageProps) {
  return (
    <section id="api-token">
      <h2>API token</h2>
      {p.newToken && <NewToken token={p.newToken} />}
      {p.token ? (
        <>
          <dl class="facts">
            <dt>Token</dt>
            <dd>
              ending in <code>…{p.token.hint}</code>
            </dd>
            <dt>Issued</dt>
            <dd>{utcWords(p.token.createdAt)}</dd>
            <dt>Last used</dt>
            <dd data-testid="token-last-used">
              {p.token.lastUsedAt ? utcWords(p.token.lastUsedAt) : 'Not used yet'}
            </dd>
          </dl>
          <h3>It may</h3>
          <ul class="plain" data-testid="token-scopes">
            {p.token.scopes.map((s) => (
              <li key={s}>
                {scopeWords(s)} <small class="id">{s}</small>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p>This portal has no API token.</p>
      )}
      <p class="muted">
        How to call the API with it: <a href="/docs/">the API reference</a>.
      </p>
      {p.user.isAdmin && (
        <p>
          <a href="/settings/keys">Manage API keys</a>: more keys, each with its own scopes, expiry
          and allowed addresses, their rotation and usage.
        </p>
      )}
      {p.user.isAdmin ? (
        p.token && (
          <p class="actions">
            <a class="button danger" href="/settings/token/regenerate" data-testid="regenerate">
              Regenerate token
            </a>
            <span class="muted">You will be asked to confirm.</span>
          </p>
        )
      ) : (
        <p class="muted">Only an administrator can regenerate the token.</p>
      )}
    </section>
  );
}

/** `/settings`: the signed-in home. */
export function SettingsPage(p: SettingsPageProps) {
  return (
    <Layout
      title="Settings"
      signedIn={{ email: p.user.email, csrfToken: p.csrfToken }}
      scripts={p.newToken ? ['/assets/one-time-token.js'] : undefined}
      current="settings"
    >
      <PageHeader
        title="Settings"
        lead="Your portal, its API token, the provider connection and the messaging settings."
      />
      <Flash flash={p.flash} />
      <AccountSignalsBanner signals={p.accountSignals ?? []} />
      <section>
        <h2>Portal</h2>
        <p>
          {p.portal.name} · portal code <code data-testid="portal-code">{p.portal.code}</code>
        </p>
        <p class="muted">
          Signed in as {p.user.email} (user {p.user.id}
          {p.user.isMainAdmin
            ? ', main administrator'
            : p.user.isAdmin
              ? ', administrator'
              : ', agent'}
          ).
        </p>
        <p class="muted" data-testid="active-sessions">
          {p.activeSessions === 1
            ? 'Signed in on 1 browser (this one).'
            : `Signed in on ${p.activeSessions} browsers, this one included.`}{' '}
          A password change signs out every one of them.
        </p>
      </section>

      <ApiToken {...p} />

      <section id="connection">
        <h2>Provider connection</h2>
        <ConnectionCard {...p.connection} isMainAdmin={p.user.isAdmin} csrfToken={p.csrfToken} />
      </section>

      <MessagingSettingsSection
        {...p.messaging}
        canChange={p.user.isAdmin}
        csrfToken={p.csrfToken}
      />

      <section id="audit">
        <h2>Recent activity</h2>
        <AuditTable rows={p.auditRows} />
        <p class="pager">
          <span class="muted">Times in UTC.</span>
          <a href="/audit">{p.moreAudit ? 'Older events in the audit log' : 'Audit log'}</a>
        </p>
      </section>
    </Layout>
  );
}
