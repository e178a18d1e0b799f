/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * What the pages' day charts share (the messages page's and the API keys page's): the row of
 * day labels under the bars and the legend.
 *
 * @see docs/decisions/0009-pages.md
 */

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
