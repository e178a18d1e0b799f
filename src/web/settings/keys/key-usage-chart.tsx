/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The usage chart of one API key on `/settings/keys`: requests per UTC day, stacked by status
 * class (2xx, 3xx, 4xx, 5xx), as an inline SVG rendered on the server, on the same chart frame
 * as `/messages` (labels as HTML text, colours from the stylesheet's classes, no script, no
 * inline style). The numbers are also in the SVG's accessible label and in a table below it.
 *
 * @see docs/how-to/restrict-an-api-key.md
 */
import type { UsageDay } from '../../../accounts/key-usage-report.ts';
import { CHART_HEIGHT as H, DayChart, niceMax } from '../../pages/chart-parts.tsx';

export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

/** Requests per day, stacked by status class; today is the last day. */
export function KeyUsageChart({ days, keyName }: { days: UsageDay[]; keyName: string }) {
  const max = niceMax(Math.max(0, ...days.map((d) => d.requests)));
  const y = (v: number) => (v / max) * H;
  const totals = STATUS_CLASSES.map(
    (c) => `${days.reduce((n, d) => n + d.byStatusClass[c], 0)} ${c}`,
  ).join(', ');
  return (
    <DayChart
      testId="key-usage-chart"
      days={days}
      max={max}
      every={days.length > 14 ? 5 : days.length > 7 ? 2 : 1}
      label={`Requests of ${keyName} per day over the last ${days.length} days, today last: ${totals}.`}
      title="Requests per day by status class"
      series={STATUS_CLASSES}
      barClass="bar-s"
      bars={(slot) =>
        days.map((d, i) => {
          let base = H;
          return (
            <g key={d.day}>
              {STATUS_CLASSES.map((c) => {
                const h = y(d.byStatusClass[c]);
                base -= h;
                return h === 0 ? null : (
                  <rect
                    key={c}
                    class={`bar-s${c}`}
                    x={i * slot + slot * 0.15}
                    y={base}
                    width={Math.max(slot * 0.7, 1)}
                    height={h}
                  >
                    <title>{`${d.day}: ${d.byStatusClass[c]} ${c}`}</title>
                  </rect>
                );
              })}
            </g>
          );
        })
      }
    />
  );
}
