/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The cards of `/messages` that read the provider (sender numbers, templates), and the card
 * frame that shows a provider failure on its card only.
 *
 * @see docs/architecture.md "web/"
 */
import type { ComponentChildren } from 'preact';
import { Card as KitCard, DataTable, EmptyState } from '../../browser/kit.tsx';
import type { MessageTemplate, PhoneNumber } from '../../messaging/provider/provider-adapter.ts';

/**
 * A number's messaging limit in words: its business portfolio's, shared by the portfolio's
 * numbers (people a day outside a service window).
 *
 * @see docs/messaging.md "Messaging limits"
 */
export function limitWords(n: Pick<PhoneNumber, 'messagingLimitTier' | 'messagingLimitPerDay'>) {
  if (n.messagingLimitPerDay !== null)
    return `portfolio limit ${n.messagingLimitPerDay.toLocaleString('en-US')} people a day`;
  if (n.messagingLimitTier === 'TIER_UNLIMITED') return 'portfolio limit: unlimited';
  return n.messagingLimitTier ?? 'no messaging limit reported';
}

/** A card's content, or why it could not be read (the provider failed or did not answer). */
export type Card<T> = { ok: true; value: T } | { ok: false; message: string; code?: string };

/** A card of the page: its content, or the sentence of the failure that kept it empty. */
export function CardOf<T>(p: {
  title: string;
  id: string;
  card: Card<T>;
  children: (value: T) => ComponentChildren;
}) {
  return (
    <KitCard title={p.title} testid={p.id}>
      {p.card.ok ? (
        p.children(p.card.value)
      ) : (
        <p class="error" data-testid={`${p.id}-error`}>
          {p.card.message}
        </p>
      )}
    </KitCard>
  );
}

/** The account's sender numbers and templates (each with its WhatsApp Business Account). */
export function Account(p: { numbers: Card<PhoneNumber[]>; templates: Card<MessageTemplate[]> }) {
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
                    id <code>{n.id}</code> · {limitWords(n)} · WABA {n.wabaId}
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
            <EmptyState title="No templates yet.">
              Templates are written and approved in your provider account; they appear here once
              submitted.
            </EmptyState>
          ) : (
            <DataTable
              testid="templates-table"
              rows={templates}
              rowKey={(t) => `${t.wabaId}/${t.id}`}
              columns={[
                { label: 'Name', kind: 'long', cell: (t) => t.name },
                { label: 'Language', cell: (t) => t.language },
                { label: 'Category', cell: (t) => t.category.toLowerCase() },
                {
                  label: 'Status',
                  cell: (t) => (
                    <span class={`status template-${t.status}`}>{t.status.toLowerCase()}</span>
                  ),
                },
                { label: 'Business account', kind: 'long', cell: (t) => `WABA ${t.wabaId}` },
              ]}
            />
          )
        }
      </CardOf>
    </>
  );
}
