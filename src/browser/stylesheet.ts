/**
 * The one stylesheet of the pages, served from `/assets/portico.css` so the Content Security
 * Policy can stay `style-src 'self'` (no inline style). Every page works from 320 px wide up:
 * tables scroll inside their card (`.table-scroll`) or stack their cells (`table.stack`) below
 * 600 px, and long identifiers wrap.
 */
export const STYLESHEET = `
:root { color-scheme: light; --fg: #1d2330; --muted: #5b6475; --line: #d9dde5; --accent: #1f5fbf; --bad: #a12a2a; --ok: #1d7a46; --warn-bg: #fff8e1; --warn-line: #e0c36a; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #f6f7f9; }
header { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: center; justify-content: space-between; padding: 0.75rem 1.5rem; background: #fff; border-bottom: 1px solid var(--line); }
header .brand { font-weight: 700; color: var(--fg); text-decoration: none; }
header nav { display: flex; flex-wrap: wrap; align-items: center; gap: 0.25rem 1rem; }
header nav form { display: flex; align-items: center; gap: 0.75rem; margin: 0; }
header nav button { margin-top: 0; }
main { max-width: 46rem; margin: 2rem auto; padding: 0 1.5rem; }
main.wide { max-width: 64rem; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.5rem; margin-bottom: 1.25rem; min-width: 0; }
h1 { font-size: 1.6rem; margin: 0 0 1rem; }
h2 { font-size: 1.15rem; margin: 0 0 0.5rem; }
h3 { font-size: 1rem; margin: 0.9rem 0 0.25rem; }
label { display: block; margin: 0.75rem 0 0.25rem; font-weight: 600; }
input[type=email], input[type=password], input[type=text], textarea, select { width: 100%; padding: 0.5rem; border: 1px solid var(--line); border-radius: 6px; font: inherit; }
button, .button { display: inline-block; margin-top: 0.75rem; padding: 0.5rem 1rem; border: 0; border-radius: 6px; background: var(--accent); color: #fff; font: inherit; text-decoration: none; cursor: pointer; }
button.secondary, .button.secondary { background: #e8ebf0; color: var(--fg); }
button.danger, .button.danger { background: var(--bad); color: #fff; }
.actions { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0 1rem; }
.muted { color: var(--muted); }
small.id, .id { color: var(--muted); font-family: ui-monospace, monospace; font-size: 0.8rem; overflow-wrap: anywhere; }
.error { color: var(--bad); font-weight: 600; }
.ok { color: var(--ok); font-weight: 600; }
.warning { background: var(--warn-bg); border: 1px solid var(--warn-line); border-radius: 6px; padding: 0.5rem 0.75rem; }
.secret { display: block; width: 100%; padding: 0.5rem; background: var(--warn-bg); border: 1px solid var(--warn-line); border-radius: 6px; font: 0.95rem ui-monospace, monospace; overflow-wrap: anywhere; }
input.secret { cursor: text; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0.5rem 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
ul.plain { list-style: none; padding: 0; margin: 0.25rem 0; }
ul.plain li { padding: 0.2rem 0; }
.table-scroll { overflow-x: auto; max-width: 100%; }
table { width: 100%; border-collapse: collapse; font-size: 0.9rem; }
th, td { text-align: left; padding: 0.3rem 0.4rem; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
td.nowrap { white-space: nowrap; }
.pager { display: flex; justify-content: space-between; margin-top: 0.75rem; }
main:has(table[data-testid=contacts]) { max-width: 64rem; }
header { flex-wrap: wrap; gap: 0.5rem; }
main:has([data-testid=message-log]) { max-width: 64rem; }
.scroll { overflow-x: auto; }
ul.plain { list-style: none; padding: 0; margin: 0; }
ul.plain li { padding: 0.35rem 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
form.filters { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: flex-end; }
form.filters label { margin-top: 0; }
form.filters input, form.filters select { padding: 0.4rem; border: 1px solid var(--line); border-radius: 6px; font: inherit; }
.status { display: inline-block; padding: 0 0.4rem; border-radius: 4px; background: #e8ebf0; font-size: 0.85rem; }
.status-delivered, .status-read, .template-APPROVED, .quality-GREEN { background: #dcf3e5; color: var(--ok); }
.status-failed, .template-REJECTED, .quality-RED { background: #f8dede; color: var(--bad); }
.template-PENDING, .quality-YELLOW { background: #fff3c4; }
figure.chart { margin: 0; }
figure.chart svg { width: 100%; height: auto; display: block; }
.chart-grid line { stroke: var(--line); }
.chart-grid text, .chart-label { fill: var(--muted); font-size: 11px; }
.bar-sent { fill: #9bb8e3; } .bar-delivered { fill: #1f5fbf; } .bar-read { fill: #1d7a46; } .bar-failed { fill: #a12a2a; }
.legend { display: inline-flex; align-items: center; gap: 0.25rem; margin-right: 1rem; font-size: 0.85rem; }
figure.chart .legend svg { width: 0.8rem; height: 0.8rem; display: inline-block; }
code { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
@media (max-width: 600px) {
  header { padding: 0.6rem 1rem; }
  main { margin: 1rem auto; padding: 0 0.75rem; }
  section { padding: 0.75rem 1rem; }
  h1 { font-size: 1.35rem; }
  header nav .who { display: none; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dd { margin-bottom: 0.4rem; }
  table.stack thead { display: none; }
  table.stack tr { display: block; padding: 0.5rem 0; border-bottom: 1px solid var(--line); }
  table.stack td { display: block; border: 0; padding: 0.1rem 0; }
  table.stack td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
  table.stack td.empty { display: none; }
}
`;
