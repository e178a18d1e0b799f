/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The audit log as a table in the customer's words (audit-words.ts), and `/audit`, its pages.
 * Times are UTC and say so (the pages run no script to learn the browser's zone). Below 640 px
 * the kit's data table stacks each event's cells, so it never overflows its card.
 */
import { Card, DataTable, EmptyState, PageHeader } from '../../browser/kit.tsx';
import { Layout } from '../../browser/layout.tsx';
import type { AuditRow } from './audit-words.ts';

export function AuditTable({ rows }: { rows: readonly AuditRow[] }) {
  if (rows.length === 0)
    return (
      <EmptyState title="Nothing recorded yet.">
        Sign-ins, connections, token changes and erasures appear here as they happen.
      </EmptyState>
    );
  return (
    <DataTable
      testid="audit"
      rows={[...rows]}
      rowKey={(r) => String(r.id)}
      columns={[
        { label: 'When (UTC)', cell: (r) => <time datetime={r.at}>{r.when}</time> },
        { label: 'What', kind: 'text', cell: (r) => r.what },
        { label: 'Who', kind: 'text', cell: (r) => r.who },
        // Names ids (an endpoint's `ep_…`) that may be wider than a phone's column.
        { label: 'Why', kind: 'long', cell: (r) => r.why ?? '' },
      ]}
    />
  );
}

/** `/audit`: every event of the portal, newest first, a page at a time. */
export function AuditPage(p: {
  signedIn: { email: string; csrfToken: string };
  rows: readonly AuditRow[];
  /** The cursor of the next (older) page; null on the last page. */
  olderCursor: string | null;
  /** Whether this is a later page (show a way back to the newest). */
  paged: boolean;
}) {
  return (
    <Layout title="Audit log" signedIn={p.signedIn} current="audit" wide>
      <PageHeader
        title="Audit log"
        lead="Who changed what in this portal, newest first. Times are in UTC (Coordinated Universal Time)."
      />
      <Card>
        <AuditTable rows={p.rows} />
        <p class="pager">
          {p.paged ? <a href="/audit">Newest events</a> : <span />}
          {p.olderCursor !== null && (
            <a href={`/audit?cursor=${p.olderCursor}`} data-testid="audit-older">
              Older events
            </a>
          )}
        </p>
      </Card>
    </Layout>
  );
}
