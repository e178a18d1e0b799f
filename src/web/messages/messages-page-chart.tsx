/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The chart of `/messages`: messages sent / delivered / read / failed per day, as grouped bars
 * in an inline SVG rendered on the server (the pages' CSP allows no script and no inline
 * style: colours come from classes of the stylesheet). The SVG stretches to its container;
 * the labels are HTML text beside and below it, so they keep their size on a 390 px screen. The numbers are also in the SVG's accessible label
 * and in a table below it, for screen readers and copying.
 *
 * @see docs/decisions/0009-pages.md
 */
import { CHART_HEIGHT as H, DayChart, niceMax } from '../pages/chart-parts.tsx';

/** One day's counts; `day` is `YYYY-MM-DD` (UTC). */
export interface DailyCounts {
  day: string;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
}

export const SERIES = ['sent', 'delivered', 'read', 'failed'] as const;

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

/** The chart: per day, one bar per series side by side (chart-parts.tsx draws the frame). */
export function DailyChart({ days }: { days: DailyCounts[] }) {
  const max = niceMax(Math.max(0, ...days.flatMap((d) => SERIES.map((s) => d[s]))));
  const y = (v: number) => H - (v / max) * H;
  const totals = SERIES.map((s) => `${days.reduce((n, d) => n + d[s], 0)} ${s}`).join(', ');
  return (
    <DayChart
      testId="daily-chart"
      days={days}
      max={max}
      every={days.length > 7 ? 2 : 1}
      label={`Messages per day over the last ${days.length} days, today last: ${totals}.`}
      title="Messages per day"
      series={SERIES}
      barClass="bar-"
      bars={(slot) => {
        const bar = (slot * 0.8) / SERIES.length;
        return days.map((d, i) => (
          <g key={d.day}>
            {SERIES.map((s, j) => (
              <rect
                key={s}
                class={`bar-${s}`}
                x={i * slot + slot * 0.1 + j * bar}
                y={y(d[s])}
                width={Math.max(bar - 1, 1)}
                height={H - y(d[s])}
              >
                <title>{`${d.day}: ${d[s]} ${s}`}</title>
              </rect>
            ))}
          </g>
        ));
      }}
    />
  );
}
