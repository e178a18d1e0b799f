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
import { niceMax } from '../../messages/messages-page-chart.tsx';
import { ChartLegend, DayAxis } from '../../pages/chart-parts.tsx';

export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

const W = 640;
const H = 220;

/** Requests per day, stacked by status class; today is the last day. */
export function KeyUsageChart({ days, keyName }: { days: UsageDay[]; keyName: string }) {
  const max = niceMax(Math.max(0, ...days.map((d) => d.requests)));
  const slot = W / Math.max(days.length, 1);
  const y = (v: number) => (v / max) * H;
  const totals = STATUS_CLASSES.map(
    (c) => `${days.reduce((n, d) => n + d.byStatusClass[c], 0)} ${c}`,
  ).join(', ');
  const today = days.length - 1;
  const every = days.length > 14 ? 5 : days.length > 7 ? 2 : 1;
  return (
    <figure class="chart" data-testid="key-usage-chart">
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
            aria-label={`Requests of ${keyName} per day over the last ${days.length} days, today last: ${totals}.`}
            xmlns="http://www.w3.org/2000/svg"
          >
            <title>Requests per day by status class</title>
            <rect class="chart-today" x={today * slot} y={0} width={slot} height={H} />
            {[0, 1, 2, 3, 4].map((i) => (
              <line
                key={i}
                class="chart-grid"
                x1={0}
                x2={W}
                y1={H - y((max / 4) * i)}
                y2={H - y((max / 4) * i)}
              />
            ))}
            {days.map((d, i) => {
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
            })}
          </svg>
        </div>
      </div>
      <DayAxis days={days} today={today} every={every} />
      <ChartLegend names={STATUS_CLASSES} barClass="bar-s" />
    </figure>
  );
}
