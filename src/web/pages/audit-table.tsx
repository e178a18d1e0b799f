/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The audit log as a table in the customer's words (audit-words.ts), and `/audit`, its pages.
 * Times are UTC and say so (the pages run no script to learn the browser's zone). Below 600 px
 * the table stacks each event's cells (`table.stack`), so it never overflows its card.
 */
import { Layout } from '../../browser/layout.tsx';
import type { AuditRow } from '../audit-words.ts';

export function AuditTable({ rows }: { rows: readonly AuditRow[] }) {
  if (rows.length === 0) return <p class="muted">Nothing recorded yet.</p>;
  return (
    <div class="table-scroll">
      <table class="stack" data-testid="audit">
        <thead>
          <tr>
            <th>When (UTC)</th>
            <th>What</th>
            <th>Who</th>
            <th>Why</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id}>
              <td class="nowrap" data-label="When">
                <time datetime={r.at}>{r.when}</time>
              </td>
              <td data-label="What">{r.what}</td>
              <td data-label="Who">{r.who}</td>
              {/* An event without a reason shows no empty "Why:" line on a phone. */}
              <td data-label="Why" class={r.why ? undefined : 'empty'}>
                {r.why}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** `/audit`: every event of the portal, newest first, a page at a time. */
export function AuditPage(p: {
  signedIn: { email: string; csrfToken: string };
  rows: readonly AuditRow[];
  /** The id to ask `?before=` for the next (older) page; null on the last page. */
  olderBefore: number | null;
  /** Whether this is a later page (show a way back to the newest). */
  paged: boolean;
}) {
  return (
    <Layout title="Audit log" signedIn={p.signedIn} wide>
      <h1>Audit log</h1>
      <section>
        <p class="muted">
          Who changed what in this portal, newest first. Times are in UTC (Coordinated Universal
          Time).
        </p>
        <AuditTable rows={p.rows} />
        <p class="pager">
          {p.paged ? <a href="/audit">Newest events</a> : <span />}
          {p.olderBefore !== null && (
            <a href={`/audit?before=${p.olderBefore}`} data-testid="audit-older">
              Older events
            </a>
          )}
        </p>
      </section>
    </Layout>
  );
}
