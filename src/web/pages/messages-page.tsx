/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/messages`: the message log (filters as a plain GET form, pages), the chart of the last 14
 * days, the credit balance and its recent transactions, the sender numbers and templates of the
 * connected account, and the drafts. Each card that depends on the provider or on the
 * messaging engine shows its own failure as a sentence; the page itself always renders.
 */
import type { ComponentChildren } from 'preact';
import { Layout } from '../../browser/layout.tsx';
import type { Draft } from '../../messaging/drafts/drafts-schemas.ts';
import type { MessageTemplate, PhoneNumber } from '../../messaging/provider/provider-adapter.ts';
import { DailyChart, type DailyCounts } from './messages-page-chart.tsx';

type SignedIn = { email: string; csrfToken: string };

/** A card's content, or the sentence that says why it is missing. */
export type Card<T> = { ok: true; value: T } | { ok: false; message: string };

/** One message of the log, as `GET /messaging/messages` gives it. */
export interface LoggedMessage {
  id: string;
  to: string;
  type: string;
  status: string;
  /** When it was queued. */
  createdAt: string;
  error?: { code: string; title: string } | null;
}

/** The credit ledger's view: integer minor units of `currency`. */
export interface CreditView {
  balance: number;
  reserved: number;
  currency: string;
  transactions: { id: string; kind: string; amount: number; createdAt: string }[];
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
}

/** Minor units as money, e.g. 1234 EUR → "€12.34". */
export function money(minor: number, currency: string): string {
  const digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions()
    .maximumFractionDigits;
  return new Intl.NumberFormat('en', { style: 'currency', currency }).format(
    minor / 10 ** (digits ?? 2),
  );
}

function CardOf<T>(p: {
  title: string;
  id: string;
  card: Card<T>;
  children: (value: T) => ComponentChildren;
}) {
  return (
    <section data-testid={p.id}>
      <h2>{p.title}</h2>
      {p.card.ok ? (
        p.children(p.card.value)
      ) : (
        <p class="error" data-testid={`${p.id}-error`}>
          {p.card.message}
        </p>
      )}
    </section>
  );
}

function nextHref(filters: MessageFilters, cursor: string): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters) as [string, string | undefined][])
    if (v) params.set(k, v);
  params.set('cursor', cursor);
  return `/messages?${params.toString()}`;
}

function Filters({ filters }: { filters: MessageFilters }) {
  return (
    <form method="get" action="/messages" class="filters">
      <span>
        <label for="status">Status</label>
        <select id="status" name="status">
          <option value="">any</option>
          {MESSAGE_STATUSES.map((s) => (
            <option key={s} value={s} selected={filters.status === s}>
              {s}
            </option>
          ))}
        </select>
      </span>
      <span>
        <label for="to">To</label>
        <input id="to" name="to" type="text" value={filters.to ?? ''} maxLength={40} />
      </span>
      <span>
        <label for="since">Since</label>
        <input id="since" name="since" type="date" value={filters.since ?? ''} />
      </span>
      <span>
        <label for="until">Until</label>
        <input id="until" name="until" type="date" value={filters.until ?? ''} />
      </span>
      <button type="submit">Filter</button>
    </form>
  );
}

function Log(p: Pick<MessagesPageProps, 'log' | 'filters'>) {
  return (
    <CardOf title="Message log" id="message-log" card={p.log}>
      {({ items, nextCursor }) => (
        <>
          {items.length === 0 ? (
            <p class="muted">
              No messages{Object.values(p.filters).some(Boolean) ? ' match' : ' yet'}.
            </p>
          ) : (
            <div class="scroll">
              <table data-testid="messages">
                <thead>
                  <tr>
                    <th>When (UTC)</th>
                    <th>To</th>
                    <th>Type</th>
                    <th>Status</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((m) => (
                    <tr key={m.id}>
                      <td class="nowrap">{m.createdAt.slice(0, 16).replace('T', ' ')}</td>
                      <td class="nowrap">{m.to}</td>
                      <td>{m.type}</td>
                      <td>
                        <span class={`status status-${m.status}`}>{m.status}</span>
                        {m.error && <span class="muted"> {m.error.title}</span>}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {nextCursor && <a href={nextHref(p.filters, nextCursor)}>Next page →</a>}
        </>
      )}
    </CardOf>
  );
}

function Account(p: Pick<MessagesPageProps, 'numbers' | 'templates'>) {
  return (
    <>
      <CardOf title="Sender numbers" id="numbers" card={p.numbers}>
        {(numbers) =>
          numbers.length === 0 ? (
            <p class="muted">The account has no phone numbers.</p>
          ) : (
            <ul class="plain">
              {numbers.map((n) => (
                <li key={n.id}>
                  <strong>{n.displayPhoneNumber}</strong> {n.verifiedName}{' '}
                  <span class={`status quality-${n.qualityRating}`}>{n.qualityRating}</span>
                  <br />
                  <span class="muted">
                    id <code>{n.id}</code> · {n.messagingLimitTier ?? 'no tier'} · WABA {n.wabaId}
                  </span>
                </li>
              ))}
            </ul>
          )
        }
      </CardOf>
      <CardOf title="Templates" id="templates" card={p.templates}>
        {(templates) =>
          templates.length === 0 ? (
            <p class="muted">No templates yet (POST /messaging/templates submits one).</p>
          ) : (
            <div class="scroll">
              <table data-testid="templates-table">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Language</th>
                    <th>Category</th>
                    <th>Status</th>
                  </tr>
                </thead>
                <tbody>
                  {templates.map((t) => (
                    <tr key={`${t.wabaId}/${t.id}`}>
                      <td>{t.name}</td>
                      <td>{t.language}</td>
                      <td>{t.category.toLowerCase()}</td>
                      <td>
                        <span class={`status template-${t.status}`}>{t.status.toLowerCase()}</span>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </CardOf>
    </>
  );
}

function Credit({ credit }: Pick<MessagesPageProps, 'credit'>) {
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
                  <span class="muted">{x.createdAt.slice(0, 16).replace('T', ' ')}</span> {x.kind}{' '}
                  {money(x.amount, c.currency)}
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
        <p class="muted">No drafts (POST /messaging/drafts composes one).</p>
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
    <Layout title="Messages" signedIn={p.signedIn}>
      <h1>Messages</h1>
      <CardOf title="Last 14 days" id="chart" card={p.chart}>
        {(days) => <DailyChart days={days} />}
      </CardOf>
      <section>
        <Filters filters={p.filters} />
      </section>
      <Log log={p.log} filters={p.filters} />
      <Credit credit={p.credit} />
      <Account numbers={p.numbers} templates={p.templates} />
      <Drafts drafts={p.drafts} />
    </Layout>
  );
}
