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
import { ChartLegend, DayAxis } from '../pages/chart-parts.tsx';

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

/**
 * The chart: bars in an SVG that stretches to its box (`preserveAspectRatio="none"`), axis and
 * day labels as HTML text in CSS pixels (they never shrink with the SVG), today's column
 * shaded and its label in bold.
 */
export function DailyChart({ days }: { days: DailyCounts[] }) {
  const max = niceMax(Math.max(0, ...days.flatMap((d) => SERIES.map((s) => d[s]))));
  const slot = W / Math.max(days.length, 1);
  const bar = (slot * 0.8) / SERIES.length;
  const y = (v: number) => H - (v / max) * H;
  const totals = SERIES.map((s) => `${days.reduce((n, d) => n + d[s], 0)} ${s}`).join(', ');
  const today = days.length - 1;
  const every = days.length > 7 ? 2 : 1;
  return (
    <figure class="chart" data-testid="daily-chart">
      <div class="chart-plot">
        <div class="chart-axis" aria-hidden="true">
          {[0, 1, 2, 3, 4].map((i) => (
            <span key={i}>{(max / 4) * i}</span>
          ))}
        </div>
        <div class="chart-area">
          <svg
            viewBox={`0 0 ${W} ${H}`}
            preserveAspectRatio="none"
            role="img"
            aria-label={`Messages per day over the last ${days.length} days, today last: ${totals}.`}
            xmlns="http://www.w3.org/2000/svg"
          >
            <title>Messages per day</title>
            <rect class="chart-today" x={today * slot} y={0} width={slot} height={H} />
            {[0, 1, 2, 3, 4].map((i) => (
              <line
                key={i}
                class="chart-grid"
                x1={0}
                x2={W}
                y1={y((max / 4) * i)}
                y2={y((max / 4) * i)}
              />
            ))}
            {days.map((d, i) => (
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
            ))}
          </svg>
        </div>
      </div>
      <DayAxis days={days} today={today} every={every} />
      <ChartLegend names={SERIES} barClass="bar-" />
    </figure>
  );
}
