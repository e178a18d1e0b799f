/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/messages`: the composer (message-composer.tsx), the message log (filters as a plain GET
 * form, pages), the chart of the last 14 days, the credit balance and its recent transactions,
 * the sender numbers and templates of the connected account, and the drafts. Each card that depends on the provider or on the
 * messaging engine shows its own failure as a sentence; the page itself always renders.
 */
import {
  Badge,
  Button,
  Card as KitCard,
  DataTable,
  EmptyState,
  Field,
  PageHeader,
} from '../../browser/kit.tsx';
import { Flash, type FlashCounts, type FlashKey } from '../../browser/flash.tsx';
import { Layout } from '../../browser/layout.tsx';
import type { Draft } from '../../messaging/drafts/drafts-schemas.ts';
import type { MessageTemplate, PhoneNumber } from '../../messaging/provider/provider-adapter.ts';
import type { ComposerView } from '../message-composer.ts';
import { Composer } from '../pages/message-composer.tsx';
import { Account, CardOf, type Card } from './messages-page-cards.tsx';

export type { Card };
import { DailyChart, type DailyCounts } from './messages-page-chart.tsx';

type SignedIn = { email: string; csrfToken: string };

/** One message of the log, as `GET /messaging/messages` gives it. */
export interface LoggedMessage {
  id: string;
  to: string;
  type: string;
  /** Its kind in words (Text, Template, Photo, Document, Buttons, List, Reaction, …). */
  kind: string;
  status: string;
  /** When it was queued. */
  createdAt: string;
  error?: { code: number | string; title: string } | null;
}

/** The credit ledger's view: integer minor units of `currency`. */
export interface CreditView {
  balance: number;
  reserved: number;
  currency: string;
  transactions: {
    id: string;
    kind: string;
    amount: number;
    createdAt: string;
    messageId?: string | null | undefined;
  }[];
}

export interface MessageFilters {
  status?: string | undefined;
  to?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
}

export const MESSAGE_STATUSES = ['queued', 'sent', 'delivered', 'read', 'failed'] as const;

export interface MessagesPageProps {
  signedIn: SignedIn;
  filters: MessageFilters;
  log: Card<{ items: LoggedMessage[]; nextCursor: string | null }>;
  chart: Card<DailyCounts[]>;
  credit: Card<CreditView>;
  numbers: Card<PhoneNumber[]>;
  templates: Card<MessageTemplate[]>;
  drafts: Draft[];
  /** The composer: what it can send, the choice, and a form sent back with its errors. */
  composer: ComposerView;
  /** The outcome of the last send (`?done=message_sent`). */
  flash?: { key: FlashKey; counts: FlashCounts } | null | undefined;
  /** The message a `message_sent` flash links to, when the log shows it. */
  sentMessageId?: string | undefined;
}

/** Minor units as money, e.g. 1234 EUR → "€12.34". */
export function money(minor: number, currency: string): string {
  const digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions()
    .maximumFractionDigits;
  return new Intl.NumberFormat('en', { style: 'currency', currency }).format(
    minor / 10 ** (digits ?? 2),
  );
}

function nextHref(filters: MessageFilters, cursor: string): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters) as [string, string | undefined][])
    if (v) params.set(k, v);
  params.set('cursor', cursor);
  return `/messages?${params.toString()}`;
}

const DATE_HELP = 'YYYY-MM-DD, UTC';

function Filters({ filters }: { filters: MessageFilters }) {
  return (
    <form method="get" action="/messages" class="filters" role="search">
      <Field
        name="status"
        id="status"
        label="Status"
        value={filters.status}
        options={[
          { value: '', label: 'any' },
          ...MESSAGE_STATUSES.map((s) => ({ value: s, label: s })),
        ]}
      />
      <Field name="to" id="to" label="To" value={filters.to} maxLength={40} />
      <Field
        name="since"
        id="since"
        label="Since"
        value={filters.since}
        pattern={'\\d{4}-\\d{2}-\\d{2}'}
        placeholder="2026-01-31"
        help={DATE_HELP}
      />
      <Field
        name="until"
        id="until"
        label="Until"
        value={filters.until}
        pattern={'\\d{4}-\\d{2}-\\d{2}'}
        placeholder="2026-01-31"
        help={DATE_HELP}
      />
      <Button kind="secondary">Filter</Button>
    </form>
  );
}

const STATUS_TONE: Record<string, 'ok' | 'bad' | 'info' | 'neutral'> = {
  delivered: 'ok',
  read: 'ok',
  failed: 'bad',
  sent: 'info',
};

function Log(p: Pick<MessagesPageProps, 'log' | 'filters'>) {
  return (
    <CardOf title="Message log" id="message-log" card={p.log}>
      {({ items, nextCursor }) => (
        <>
          {items.length === 0 ? (
            Object.values(p.filters).some(Boolean) ? (
              <EmptyState
                title="No messages match."
                action={{ href: '/messages', label: 'Clear the filters' }}
              />
            ) : (
              <EmptyState title="No messages yet.">
                Messages sent from this page or through the Portico API appear here with their
                status.
              </EmptyState>
            )
          ) : (
            <DataTable
              testid="messages"
              rows={items}
              rowKey={(m) => m.id}
              rowId={(m) => `m-${m.id}`}
              columns={[
                { label: 'When (UTC)', cell: (m) => m.createdAt.slice(0, 16).replace('T', ' ') },
                { label: 'To', cell: (m) => m.to },
                {
                  label: 'Kind',
                  cell: (m) => (
                    <Badge tone="neutral" testid={`kind-${m.type}`}>
                      {m.kind}
                    </Badge>
                  ),
                },
                {
                  label: 'Status',
                  kind: 'text',
                  cell: (m) => (
                    <>
                      <Badge tone={STATUS_TONE[m.status] ?? 'neutral'}>{m.status}</Badge>
                      {m.error && <span class="muted"> {m.error.title}</span>}
                    </>
                  ),
                },
              ]}
            />
          )}
          {nextCursor && (
            <p class="pager">
              <span />
              <a href={nextHref(p.filters, nextCursor)}>Next page →</a>
            </p>
          )}
        </>
      )}
    </CardOf>
  );
}

/** A credit transaction's kind in words. */
const CREDIT_WORDS: Record<string, string> = {
  topup: 'Top-up',
  reserve: 'Held for a queued message:',
  capture: 'Charged for a sent message:',
  release: 'Returned (message not sent):',
};

function Credit({ credit, log }: Pick<MessagesPageProps, 'credit' | 'log'>) {
  const loggedIds = new Set(log.ok ? log.value.items.map((m) => m.id) : []);
  return (
    <CardOf title="Credit" id="credit" card={credit}>
      {(c) => (
        <>
          <p>
            <strong data-testid="balance">{money(c.balance, c.currency)}</strong> available
            {c.reserved > 0 && (
              <span class="muted"> · {money(c.reserved, c.currency)} reserved</span>
            )}
          </p>
          {c.transactions.length > 0 && (
            <ul class="plain">
              {c.transactions.map((x) => (
                <li key={x.id}>
                  <span class="muted">{x.createdAt.slice(0, 16).replace('T', ' ')}</span>{' '}
                  {CREDIT_WORDS[x.kind] ?? x.kind} {money(x.amount, c.currency)}
                  {x.messageId && (
                    <>
                      {' '}
                      · message{' '}
                      {loggedIds.has(x.messageId) ? (
                        <a href={`#m-${x.messageId}`}>
                          <code>{x.messageId}</code>
                        </a>
                      ) : (
                        <code>{x.messageId}</code>
                      )}
                    </>
                  )}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </CardOf>
  );
}

function Drafts({ drafts }: Pick<MessagesPageProps, 'drafts'>) {
  return (
    <section data-testid="drafts">
      <h2>Drafts</h2>
      {drafts.length === 0 ? (
        <EmptyState title="No drafts.">
          Drafts are messages to many recipients, prepared through the Portico API and sent when you
          choose.
        </EmptyState>
      ) : (
        <ul class="plain">
          {drafts.map((d) => {
            const r = d.recipients;
            const count = r.contactIds.length + r.phones.length;
            return (
              <li key={d.id}>
                <code>{d.id}</code>{' '}
                {d.type === 'template' ? `template ${d.template?.name ?? ''}` : 'text'} · {count}{' '}
                recipient(s){r.tag ? ` + tag ${r.tag}` : ''} ·{' '}
                {d.sentAt ? `sent ${d.sentAt.slice(0, 16).replace('T', ' ')}` : 'not sent'}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}

export function MessagesPage(p: MessagesPageProps) {
  return (
    <Layout title="Messages" signedIn={p.signedIn} current="messages" wide>
      <PageHeader
        title="Messages"
        lead="Send messages, see how they went and what they cost. Times in UTC."
      />
      <Flash
        flash={p.flash}
        link={
          p.sentMessageId ? { href: `#m-${p.sentMessageId}`, label: 'See the message' } : undefined
        }
      />
      <Composer view={p.composer} csrfToken={p.signedIn.csrfToken} />
      <CardOf title="Last 14 days" id="chart" card={p.chart}>
        {(days) => <DailyChart days={days} />}
      </CardOf>
      <KitCard title="Filter the log">
        <Filters filters={p.filters} />
      </KitCard>
      <Log log={p.log} filters={p.filters} />
      <Credit credit={p.credit} log={p.log} />
      <Account numbers={p.numbers} templates={p.templates} />
      <Drafts drafts={p.drafts} />
    </Layout>
  );
}
