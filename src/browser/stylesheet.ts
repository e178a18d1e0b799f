/**
 * The one stylesheet of the pages, served from `/assets/portico.css` so the Content Security
 * Policy can stay `style-src 'self'` (no inline style).
 */
export const STYLESHEET = `
:root { color-scheme: light; --fg: #1d2330; --muted: #5b6475; --line: #d9dde5; --accent: #1f5fbf; --bad: #a12a2a; --ok: #1d7a46; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #f6f7f9; }
header { display: flex; align-items: center; justify-content: space-between; padding: 0.75rem 1.5rem; background: #fff; border-bottom: 1px solid var(--line); }
header .brand { font-weight: 700; color: var(--fg); text-decoration: none; }
header form { margin: 0; }
main { max-width: 46rem; margin: 2rem auto; padding: 0 1.5rem; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.5rem; margin-bottom: 1.25rem; }
h1 { font-size: 1.6rem; margin: 0 0 1rem; }
h2 { font-size: 1.15rem; margin: 0 0 0.5rem; }
label { display: block; margin: 0.75rem 0 0.25rem; font-weight: 600; }
input[type=email], input[type=password], input[type=text] { width: 100%; padding: 0.5rem; border: 1px solid var(--line); border-radius: 6px; font: inherit; }
button, .button { display: inline-block; margin-top: 0.75rem; padding: 0.5rem 1rem; border: 0; border-radius: 6px; background: var(--accent); color: #fff; font: inherit; text-decoration: none; cursor: pointer; }
button.secondary { background: #e8ebf0; color: var(--fg); }
button.danger { background: var(--bad); }
.muted { color: var(--muted); }
.error { color: var(--bad); font-weight: 600; }
.ok { color: var(--ok); font-weight: 600; }
.secret { display: block; padding: 0.5rem; background: #fff8e1; border: 1px solid #e0c36a; border-radius: 6px; font-family: ui-monospace, monospace; word-break: break-all; }
table { width: 100%; border-collapse: collapse; font-size: 0.9rem; }
th, td { text-align: left; padding: 0.3rem 0.4rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td.nowrap { white-space: nowrap; }
header form a { margin-right: 0.75rem; }
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
code { font-family: ui-monospace, monospace; }
`;
