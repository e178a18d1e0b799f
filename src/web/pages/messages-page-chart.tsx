/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The chart of `/messages`: messages sent / delivered / read / failed per day, as grouped bars
 * in an inline SVG rendered on the server (the pages' CSP allows no script and no inline
 * style: colours come from classes of the stylesheet). It scales with its container
 * (`viewBox`), so it fits a 390 px screen. The numbers are also in the SVG's accessible label
 * and in a table below it, for screen readers and copying.
 *
 * @see docs/decisions.md "Messaging: the /messages chart"
 */

/** One day's counts; `day` is `YYYY-MM-DD` (UTC). */
export interface DailyCounts {
  day: string;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
}

export const SERIES = ['sent', 'delivered', 'read', 'failed'] as const;

const W = 640;
const H = 220;
const PAD = { left: 36, right: 8, top: 12, bottom: 28 };

/** A round upper bound for the axis and its 4 ticks (1, 2, 5 × 10^n). */
export function niceMax(max: number): number {
  if (max <= 4) return 4;
  const step = max / 4;
  const mag = 10 ** Math.floor(Math.log10(step));
  const nice = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= step) ?? 10 * mag;
  return nice * 4;
}

/** The last `days` UTC days ending with `today`, each with its counts (0 when absent). */
export function lastDays(counts: DailyCounts[], today: Date, days = 14): DailyCounts[] {
  const byDay = new Map(counts.map((c) => [c.day, c]));
  const out: DailyCounts[] = [];
  for (let i = days - 1; i >= 0; i--) {
    const day = new Date(today.getTime() - i * 86_400_000).toISOString().slice(0, 10);
    out.push(byDay.get(day) ?? { day, sent: 0, delivered: 0, read: 0, failed: 0 });
  }
  return out;
}

export function DailyChart({ days }: { days: DailyCounts[] }) {
  const max = niceMax(Math.max(0, ...days.flatMap((d) => SERIES.map((s) => d[s]))));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(days.length, 1);
  const bar = (slot * 0.8) / SERIES.length;
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const totals = SERIES.map((s) => `${days.reduce((n, d) => n + d[s], 0)} ${s}`).join(', ');
  return (
    <figure class="chart" data-testid="daily-chart">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`Messages per day over the last ${days.length} days: ${totals}.`}
        xmlns="http://www.w3.org/2000/svg"
      >
        <title>Messages per day</title>
        {[0, 1, 2, 3, 4].map((i) => {
          const v = (max / 4) * i;
          return (
            <g key={i} class="chart-grid">
              <line x1={PAD.left} x2={W - PAD.right} y1={y(v)} y2={y(v)} />
              <text x={PAD.left - 4} y={y(v) + 4} text-anchor="end">
                {v}
              </text>
            </g>
          );
        })}
        {days.map((d, i) => {
          const x0 = PAD.left + i * slot + slot * 0.1;
          return (
            <g key={d.day}>
              {SERIES.map((s, j) => (
                <rect
                  key={s}
                  class={`bar-${s}`}
                  x={x0 + j * bar}
                  y={y(d[s])}
                  width={Math.max(bar - 1, 1)}
                  height={PAD.top + plotH - y(d[s])}
                >
                  <title>{`${d.day}: ${d[s]} ${s}`}</title>
                </rect>
              ))}
              {i % 2 === days.length % 2 && (
                <text class="chart-label" x={x0 + slot * 0.4} y={H - 8} text-anchor="middle">
                  {d.day.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption>
        {SERIES.map((s) => (
          <span key={s} class="legend">
            <svg viewBox="0 0 10 10" aria-hidden="true">
              <rect class={`bar-${s}`} width="10" height="10" />
            </svg>{' '}
            {s}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
