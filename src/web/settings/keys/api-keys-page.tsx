/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/settings/keys` on the page kit: the portal's API keys (name, scopes, expiry, allowed
 * addresses, last use), the form that creates one (its secret shown once after), one key's usage
 * as a chart, and the confirmation steps of rotating (with the overlap chosen there) and revoking.
 *
 * @see docs/how-to/restrict-an-api-key.md
 */
import type { ApiKeyView } from '../../../accounts/api-keys-service.ts';
import type { ApiKeyUsage } from '../../../accounts/key-usage-report.ts';
import { SCOPES, scopeWords } from '../../../accounts/scopes.ts';
import { ErrorFlash, Flash, type FlashCounts, type FlashKey } from '../../../browser/flash.tsx';
import {
  Button,
  ButtonLink,
  Card,
  ConfirmStep,
  DataTable,
  EmptyState,
  Field,
  PageHeader,
} from '../../../browser/kit.tsx';
import { Layout } from '../../../browser/layout.tsx';
import { Fragment } from 'preact';
import { KeyUsageChart, STATUS_CLASSES } from './key-usage-chart.tsx';

/** The create form as typed. */
export interface KeyForm {
  name: string;
  scopes: string[];
  /** `YYYY-MM-DD` or empty. */
  expiresOn: string;
  allowedIps: string;
}

export interface ApiKeysPageProps {
  email: string;
  csrfToken: string;
  keys: ApiKeyView[];
  /** The usage of the key chosen (`?key=`), or of the first key. */
  usage: { key: ApiKeyView; report: ApiKeyUsage } | null;
  /** A secret made by the last create or rotate: shown once. */
  newSecret?: { keyId: number; name: string; secret: string } | undefined;
  flash?: { key: FlashKey; counts: FlashCounts } | null | undefined;
  /** An error that concerns no single field (or the create form's). */
  error?: string | undefined;
  /** The create form as typed, when it came back with an error. */
  form?: KeyForm | undefined;
}

/** A time as `YYYY-MM-DD HH:MM UTC`, kept on one line. */
const when = (iso: string | null) =>
  iso ? (
    <time dateTime={iso} class="when">
      {`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}
    </time>
  ) : (
    ''
  );

/** A scope's name, which may break after each colon only (`messaging:` / `conversations:write`). */
const scopeName = (scope: string) =>
  scope.split(':').map((part, i, parts) => (
    <Fragment key={i}>
      {part}
      {i < parts.length - 1 && (
        <>
          :<wbr />
        </>
      )}
    </Fragment>
  ));

/** Choices of the rotation overlap, in seconds (at most the service's 24 hours). */
export const OVERLAP_CHOICES: readonly { seconds: number; label: string }[] = [
  { seconds: 0, label: 'None: the current secret stops at once' },
  { seconds: 3_600, label: '1 hour' },
  { seconds: 4 * 3_600, label: '4 hours' },
  { seconds: 12 * 3_600, label: '12 hours' },
  { seconds: 86_400, label: '24 hours' },
];

function KeysTable({ p }: { p: ApiKeysPageProps }) {
  if (p.keys.length === 0)
    return (
      <EmptyState title="No API keys." action={{ href: '#create', label: 'Create a key' }}>
        A key lets a program call the API with the scopes you give it.
      </EmptyState>
    );
  return (
    <DataTable
      testid="keys"
      rows={p.keys}
      rowKey={(k) => String(k.id)}
      rowId={(k) => `key-${k.id}`}
      columns={[
        {
          label: 'Name',
          kind: 'long',
          cell: (k) => (
            <>
              <strong>{k.name}</strong>
              <br />
              <span class="id">
                key {k.id} · ending in …{k.hint}
              </span>
            </>
          ),
        },
        {
          label: 'Scopes',
          kind: 'short',
          cell: (k) => (
            <ul class="plain">
              {k.scopes.map((s) => (
                <li key={s} title={scopeWords(s)}>
                  <code class="scope">{scopeName(s)}</code>
                </li>
              ))}
            </ul>
          ),
        },
        {
          label: 'Expires',
          kind: 'text',
          cell: (k) => (k.expiresAt ? when(k.expiresAt) : 'Never'),
        },
        {
          label: 'Allowed addresses',
          kind: 'long',
          cell: (k) => (k.allowedIps ? k.allowedIps.join(', ') : 'Any'),
        },
        {
          label: 'Last used',
          kind: 'text',
          cell: (k) =>
            k.lastUsedAt ? (
              <>
                {when(k.lastUsedAt)}
                <br />
                <span class="muted">from {k.lastUsedIp ?? 'an unknown address'}</span>
              </>
            ) : (
              'Not used yet'
            ),
        },
        {
          label: 'Actions',
          kind: 'text',
          cell: (k) => (
            <div class="row-actions">
              <ButtonLink href={`/settings/keys?key=${k.id}#usage`} kind="secondary">
                Usage
              </ButtonLink>
              <ButtonLink href={`/settings/keys/${k.id}/rotate`} kind="secondary">
                Rotate
              </ButtonLink>
              <ButtonLink href={`/settings/keys/${k.id}/revoke`} kind="danger">
                Revoke
              </ButtonLink>
              {k.previousSecretValidUntil && (
                <p class="muted">Previous secret works until {when(k.previousSecretValidUntil)}.</p>
              )}
            </div>
          ),
        },
      ]}
    />
  );
}

function NewSecret({ s }: { s: NonNullable<ApiKeysPageProps['newSecret']> }) {
  return (
    <div class="warning" role="status">
      <p class="ok">
        The secret of key {s.keyId} ({s.name}). Copy it now: it is shown only this once.
      </p>
      <label for="new-key-secret">API key secret</label>
      <input
        id="new-key-secret"
        class="secret"
        type="text"
        readonly
        value={s.secret}
        data-select-on-click
        data-testid="new-key-secret"
        autocomplete="off"
        spellcheck={false}
      />
      <p class="actions">
        <button type="button" hidden data-copy-from="new-key-secret" data-copy-status="copy-status">
          Copy
        </button>
        <span id="copy-status" class="muted" aria-live="polite">
          Click the field to select it all.
        </span>
      </p>
    </div>
  );
}

function CreateForm({ p }: { p: ApiKeysPageProps }) {
  const f = p.form;
  return (
    <form method="post" action="/settings/keys" id="create">
      <h3>Create a key</h3>
      <input type="hidden" name="csrf" value={p.csrfToken} />
      <Field
        name="name"
        label="Name"
        required
        maxLength={100}
        value={f?.name}
        help="What the key is for, e.g. “billing export”."
      />
      <fieldset>
        <legend>Scopes</legend>
        {SCOPES.map((scope) => (
          <label key={scope} class="check">
            <input
              type="checkbox"
              name="scopes"
              value={scope}
              checked={f?.scopes.includes(scope)}
            />{' '}
            {scopeWords(scope)} <small class="id">{scope}</small>
          </label>
        ))}
      </fieldset>
      <Field
        name="expiresOn"
        label="Expires on (optional)"
        type="date"
        value={f?.expiresOn}
        help="At 00:00 UTC that day. Empty: it never expires."
      />
      <Field
        name="allowedIps"
        label="Allowed addresses (optional)"
        rows={2}
        maxLength={4000}
        value={f?.allowedIps}
        help="Addresses or CIDR ranges, separated by commas or lines, e.g. 203.0.113.0/24. Empty: any address."
      />
      <Button testid="create-key">Create key</Button>
    </form>
  );
}

function Usage({ usage }: { usage: NonNullable<ApiKeysPageProps['usage']> }) {
  const { key, report } = usage;
  const total = report.days.reduce((n, d) => n + d.requests, 0);
  return (
    <Card title={`Usage of ${key.name}`} id="usage" testid="usage">
      <p class="muted">
        Requests per day over the last {report.days.length} days (UTC), by status class:{' '}
        <strong data-testid="usage-total">{total}</strong> in all. Counts are written every few
        seconds.
      </p>
      <KeyUsageChart days={report.days} keyName={key.name} />
      {report.operations.length > 0 && (
        <DataTable
          testid="usage-operations"
          caption="By operation, busiest first"
          rows={report.operations}
          rowKey={(o) => `${o.operation} ${o.statusClass}`}
          columns={[
            { label: 'Operation', kind: 'long', cell: (o) => <code>{o.operation}</code> },
            { label: 'Status', cell: (o) => o.statusClass },
            { label: 'Requests', cell: (o) => String(o.requests) },
          ]}
        />
      )}
      <details>
        <summary>The numbers per day</summary>
        <DataTable
          testid="usage-days"
          rows={report.days.filter((d) => d.requests > 0)}
          rowKey={(d) => d.day}
          columns={[
            { label: 'Day', cell: (d) => d.day },
            ...STATUS_CLASSES.map((c) => ({
              label: c,
              cell: (d: (typeof report.days)[number]) => String(d.byStatusClass[c]),
            })),
          ]}
        />
      </details>
    </Card>
  );
}

/** `/settings/keys`: the portal's API keys, their usage, and the forms that change them. */
export function ApiKeysPage(p: ApiKeysPageProps) {
  return (
    <Layout
      title="API keys"
      signedIn={{ email: p.email, csrfToken: p.csrfToken }}
      current="keys"
      scripts={p.newSecret ? ['/assets/one-time-token.js'] : undefined}
      wide
    >
      <PageHeader
        title="API keys"
        lead="Keys your programs call the API with: each with its own scopes, expiry and allowed addresses."
      />
      <Flash flash={p.flash} />
      <ErrorFlash>{p.error}</ErrorFlash>
      {p.newSecret && <NewSecret s={p.newSecret} />}
      <Card title="Keys">
        <KeysTable p={p} />
        <CreateForm p={p} />
      </Card>
      {p.usage && <Usage usage={p.usage} />}
    </Layout>
  );
}

/** The confirmation step of rotating a key, with the overlap chosen there. */
export function ConfirmRotatePage(p: { email: string; csrfToken: string; apiKey: ApiKeyView }) {
  return (
    <Layout title="Rotate API key" signedIn={p} current="keys">
      <ConfirmStep
        title={`Rotate the key “${p.apiKey.name}”?`}
        csrfToken={p.csrfToken}
        action={`/settings/keys/${p.apiKey.id}/rotate`}
        confirmLabel="Rotate key"
        cancelHref="/settings/keys"
        cancelLabel="Cancel"
        fields={
          <Field
            name="overlap"
            label="The current secret keeps working for"
            value="3600"
            options={OVERLAP_CHOICES.map((c) => ({ value: String(c.seconds), label: c.label }))}
            help="Time to give the new secret to every program that uses the key."
          />
        }
      >
        <p>
          Key {p.apiKey.id}, ending in <code>…{p.apiKey.hint}</code>. It gets a new secret, shown
          once; its name, scopes, expiry and addresses stay. After the overlap the current secret
          stops working.
        </p>
      </ConfirmStep>
    </Layout>
  );
}

/** The confirmation step of revoking a key. */
export function ConfirmRevokePage(p: { email: string; csrfToken: string; apiKey: ApiKeyView }) {
  return (
    <Layout title="Revoke API key" signedIn={p} current="keys">
      <ConfirmStep
        title={`Revoke the key “${p.apiKey.name}”?`}
        csrfToken={p.csrfToken}
        action={`/settings/keys/${p.apiKey.id}/revoke`}
        confirmLabel="Revoke key"
        cancelHref="/settings/keys"
        cancelLabel="Cancel"
      >
        <p>
          Key {p.apiKey.id}, ending in <code>…{p.apiKey.hint}</code>.{' '}
          <strong>Every program using it is refused at once</strong>, and its usage is deleted. This
          cannot be undone.
        </p>
      </ConfirmStep>
    </Layout>
  );
}
