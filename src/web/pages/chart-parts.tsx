/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * What the pages' day charts share (the messages page's and the API keys page's): the frame
 * (axis, stretching SVG, grid, today's column), the row of day labels under the bars, the
 * legend, and the axis's round maximum.
 *
 * @see docs/decisions/0009-pages.md
 */
import type { ComponentChildren } from 'preact';

/** The SVG's coordinate box (it stretches to its container). */
export const CHART_WIDTH = 640;
export const CHART_HEIGHT = 220;

/** A round upper bound for the axis and its 4 ticks (1, 2, 5 × 10^n). */
export function niceMax(max: number): number {
  if (max <= 4) return 4;
  const step = max / 4;
  const mag = 10 ** Math.floor(Math.log10(step));
  const nice = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= step) ?? 10 * mag;
  return nice * 4;
}

/**
 * A chart of one column a day, today last: the axis and the day labels as HTML text in CSS
 * pixels (they never shrink with the SVG), the bars in an SVG that stretches to its box
 * (`preserveAspectRatio="none"`), today's column shaded, the grid at the axis's 4 ticks, and the
 * legend. The bars are the caller's, drawn in `CHART_WIDTH` × `CHART_HEIGHT` given each day's
 * column width (`slot`).
 *
 * @param p.max the axis's maximum (niceMax of the largest value).
 * @param p.label the SVG's accessible label (the numbers, for screen readers).
 */
export function DayChart(p: {
  testId: string;
  days: readonly { day: string }[];
  max: number;
  every: number;
  label: string;
  title: string;
  series: readonly string[];
  barClass: string;
  bars: (slot: number) => ComponentChildren;
}) {
  const W = CHART_WIDTH;
  const H = CHART_HEIGHT;
  const slot = W / Math.max(p.days.length, 1);
  const today = p.days.length - 1;
  return (
    <figure class="chart" data-testid={p.testId}>
      <div class="chart-plot">
        <div class="chart-axis" aria-hidden="true">
          {[0, 1, 2, 3, 4].map((i) => (
            <span key={i}>{(p.max / 4) * i}</span>
          ))}
        </div>
        <div class="chart-area">
          <svg
            viewBox={`0 0 ${W} ${H}`}
            preserveAspectRatio="none"
            role="img"
            aria-label={p.label}
            xmlns="http://www.w3.org/2000/svg"
          >
            <title>{p.title}</title>
            <rect class="chart-today" x={today * slot} y={0} width={slot} height={H} />
            {[0, 1, 2, 3, 4].map((i) => (
              <line
                key={i}
                class="chart-grid"
                x1={0}
                x2={W}
                y1={H - (((p.max / 4) * i) / p.max) * H}
                y2={H - (((p.max / 4) * i) / p.max) * H}
              />
            ))}
            {p.bars(slot)}
          </svg>
        </div>
      </div>
      <DayAxis days={p.days} today={today} every={p.every} />
      <ChartLegend names={p.series} barClass={p.barClass} />
    </figure>
  );
}

/**
 * The day labels: `today` for the last day, and every `every`-th day counted back from it as
 * `MM-DD`, so the labels never crowd a narrow screen.
 */
export function DayAxis(p: { days: readonly { day: string }[]; today: number; every: number }) {
  return (
    <div class="chart-days" aria-hidden="true">
      {p.days.map((d, i) =>
        i === p.today ? (
          <span key={d.day} class="today">
            today
          </span>
        ) : (
          <span key={d.day}>{(p.today - i) % p.every === 0 ? d.day.slice(5) : ''}</span>
        ),
      )}
    </div>
  );
}

/** The legend: one swatch per series, coloured by the series' bar class (`barClass` + name). */
export function ChartLegend(p: { names: readonly string[]; barClass: string }) {
  return (
    <figcaption>
      {p.names.map((name) => (
        <span key={name} class="legend">
          <span class={`swatch ${p.barClass}${name}`} aria-hidden="true" /> {name}
        </span>
      ))}
    </figcaption>
  );
}
