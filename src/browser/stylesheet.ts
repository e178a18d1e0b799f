/**
 * The one stylesheet of the pages, served from `/assets/portico.css` so the Content Security
 * Policy can stay `style-src 'self'` (no inline style). It holds the design tokens (colours,
 * spacing, type scale as custom properties on `:root`) and the styles of the page kit's
 * components (src/browser/kit.tsx): the app shell, page header, cards, data tables (stacked
 * cards below 640 px), form fields, buttons, badges, flashes, empty states and the
 * confirmation step. Every page works from 320 px wide up.
 *
 * @see docs/architecture.md "browser/"
 */

/** The design tokens, also used by the sandbox provider's own small stylesheet. */
export const TOKENS = `
:root {
  color-scheme: light;
  --c-fg: #1b2230; --c-muted: #586174; --c-line: #d8dde6; --c-bg: #f4f6f9; --c-surface: #fff;
  --c-accent: #1d5bb8; --c-accent-fg: #fff; --c-accent-soft: #e6eefa;
  --c-bad: #a3262a; --c-bad-soft: #fbe9e9; --c-ok: #17693d; --c-ok-soft: #e2f4e9;
  --c-warn: #7a5a00; --c-warn-soft: #fff6d6; --c-warn-line: #e3c766; --c-neutral-soft: #eceff3;
  --s-1: 0.25rem; --s-2: 0.5rem; --s-3: 0.75rem; --s-4: 1rem; --s-5: 1.5rem; --s-6: 2rem;
  --t-xs: 0.8rem; --t-sm: 0.9rem; --t-md: 1rem; --t-lg: 1.15rem; --t-xl: 1.6rem;
  --radius: 8px; --radius-sm: 6px;
  --font: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  --mono: ui-monospace, "SFMono-Regular", Menlo, monospace;
}
`;

export const STYLESHEET = `${TOKENS}
* { box-sizing: border-box; }
body { margin: 0; font: var(--t-md)/1.5 var(--font); color: var(--c-fg); background: var(--c-bg); }
a { color: var(--c-accent); }
a:focus-visible, button:focus-visible, summary:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible { outline: 3px solid var(--c-accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: var(--s-2); background: var(--c-surface); padding: var(--s-2) var(--s-3); }
.skip:focus { left: var(--s-2); z-index: 2; }

/* App shell */
.shell-bar { display: flex; align-items: center; gap: var(--s-4); padding: var(--s-2) var(--s-5); background: var(--c-surface); border-bottom: 1px solid var(--c-line); }
.brand { display: inline-flex; align-items: center; gap: var(--s-2); font-weight: 700; font-size: var(--t-lg); color: var(--c-fg); text-decoration: none; }
.brand img { width: 1.6rem; height: 1.6rem; }
.nav { display: flex; flex-wrap: wrap; gap: var(--s-1); margin: 0; padding: 0; list-style: none; }
.nav a { display: block; padding: var(--s-2) var(--s-3); border-radius: var(--radius-sm); color: var(--c-fg); text-decoration: none; font-weight: 500; }
.nav a:hover { background: var(--c-neutral-soft); }
.nav a[aria-current=page] { background: var(--c-accent-soft); color: var(--c-accent); font-weight: 700; box-shadow: inset 0 -3px 0 var(--c-accent); }
.shell-user { margin-left: auto; display: flex; align-items: center; gap: var(--s-3); }
.shell-user form { margin: 0; }
.shell-user .who { color: var(--c-muted); font-size: var(--t-sm); overflow-wrap: anywhere; }
.shell-desktop { display: flex; align-items: center; gap: var(--s-4); flex: 1; min-width: 0; }
details.menu { display: none; margin-left: auto; }
details.menu > summary { list-style: none; cursor: pointer; padding: var(--s-2) var(--s-3); border: 1px solid var(--c-line); border-radius: var(--radius-sm); font-weight: 600; }
details.menu > summary::-webkit-details-marker { display: none; }
details.menu[open] > summary { background: var(--c-neutral-soft); }
.menu-panel { position: absolute; left: 0; right: 0; top: 3.3rem; z-index: 3; background: var(--c-surface); border-bottom: 1px solid var(--c-line); padding: var(--s-3) var(--s-4); box-shadow: 0 6px 16px #0002; }
.menu-panel .nav { flex-direction: column; }
.menu-panel .shell-user { margin: var(--s-3) 0 0; padding-top: var(--s-3); border-top: 1px solid var(--c-line); justify-content: space-between; }
.agent-bar { flex-wrap: wrap; gap: var(--s-2) var(--s-4); }
.sandbox-banner { background: var(--c-warn-soft); color: var(--c-warn); border-bottom: 1px solid var(--c-warn-line); text-align: center; padding: var(--s-1) var(--s-4); font-size: var(--t-sm); }
main { max-width: 48rem; margin: var(--s-5) auto var(--s-6); padding: 0 var(--s-5); }
main.wide { max-width: 72rem; }

/* Page header, cards */
.page-header { display: flex; flex-wrap: wrap; align-items: flex-end; justify-content: space-between; gap: var(--s-2) var(--s-4); margin-bottom: var(--s-4); }
.page-header p { margin: var(--s-1) 0 0; color: var(--c-muted); }
h1 { font-size: var(--t-xl); line-height: 1.2; margin: 0; }
h2 { font-size: var(--t-lg); margin: 0 0 var(--s-2); }
h3 { font-size: var(--t-md); margin: var(--s-4) 0 var(--s-1); }
section, .card { background: var(--c-surface); border: 1px solid var(--c-line); border-radius: var(--radius); padding: var(--s-4) var(--s-5); margin-bottom: var(--s-4); min-width: 0; }
.card-head { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: baseline; gap: var(--s-2); }
section.narrow { max-width: 26rem; margin: var(--s-5) auto; }
.grid-2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 0 var(--s-4); }

/* Forms */
label, .label { display: block; margin: var(--s-3) 0 var(--s-1); font-weight: 600; }
.field { margin-bottom: var(--s-3); }
.field .help { margin: var(--s-1) 0 0; color: var(--c-muted); font-size: var(--t-sm); }
.field .field-error { margin: var(--s-1) 0 0; color: var(--c-bad); font-weight: 600; font-size: var(--t-sm); }
input[type=email], input[type=password], input[type=text], input[type=url], input[type=number], input[type=search], input[type=tel], input[type=date], select, textarea { width: 100%; max-width: 100%; padding: var(--s-2) var(--s-3); border: 1px solid #aeb6c4; border-radius: var(--radius-sm); font: inherit; background: var(--c-surface); color: var(--c-fg); }
input[aria-invalid=true], select[aria-invalid=true], textarea[aria-invalid=true] { border-color: var(--c-bad); box-shadow: 0 0 0 1px var(--c-bad); }
input[type=file] { max-width: 100%; font: inherit; }
fieldset { border: 1px solid var(--c-line); border-radius: var(--radius-sm); padding: var(--s-2) var(--s-3); margin: var(--s-3) 0; min-width: 0; }
legend { font-weight: 600; padding: 0 var(--s-1); }
.check { display: flex; align-items: center; gap: var(--s-2); font-weight: 400; margin: var(--s-1) 0; overflow-wrap: anywhere; }
.check input { width: 1.1rem; height: 1.1rem; }
.field-row { display: flex; flex-wrap: wrap; gap: 0 var(--s-4); align-items: flex-end; }
.field-row > .field { flex: 1 1 10rem; min-width: 0; }
figure.template-body { margin: var(--s-3) 0; }
figure.template-body blockquote { margin: var(--s-1) 0 0; padding: var(--s-2) var(--s-3); border-left: 3px solid var(--c-accent); background: var(--c-bg); white-space: pre-wrap; overflow-wrap: anywhere; }

/* Buttons */
button, .button { display: inline-flex; align-items: center; justify-content: center; min-height: 2.5rem; padding: var(--s-2) var(--s-4); border: 1px solid transparent; border-radius: var(--radius-sm); background: var(--c-accent); color: var(--c-accent-fg); font: inherit; font-weight: 600; text-decoration: none; cursor: pointer; white-space: nowrap; }
button:hover, .button:hover { filter: brightness(0.93); }
button.secondary, .button.secondary { background: var(--c-surface); color: var(--c-fg); border-color: #aeb6c4; }
button.danger, .button.danger { background: var(--c-bad); color: #fff; }
button.link { background: none; border: 0; color: var(--c-accent); padding: 0; min-height: 0; text-decoration: underline; font-weight: 400; }
.actions { display: flex; flex-wrap: wrap; align-items: center; gap: var(--s-3); margin: var(--s-4) 0 0; }
.actions form { margin: 0; }
.row-actions { display: flex; flex-wrap: wrap; gap: var(--s-2); }
.row-actions form { margin: 0; }
.row-actions button, .row-actions .button { min-height: 2.25rem; padding: var(--s-1) var(--s-3); font-size: var(--t-sm); }

/* Badges, flashes, empty states */
.badge, .status { display: inline-block; padding: 0 var(--s-2); border-radius: 999px; font-size: var(--t-xs); font-weight: 600; line-height: 1.6; background: var(--c-neutral-soft); color: var(--c-fg); white-space: nowrap; }
.badge-ok, .status-delivered, .status-read, .template-APPROVED, .quality-GREEN { background: var(--c-ok-soft); color: var(--c-ok); }
.badge-bad, .status-failed, .template-REJECTED, .quality-RED { background: var(--c-bad-soft); color: var(--c-bad); }
.badge-warn, .template-PENDING, .quality-YELLOW { background: var(--c-warn-soft); color: var(--c-warn); }
.badge-info { background: var(--c-accent-soft); color: var(--c-accent); }
.flash { border-radius: var(--radius-sm); padding: var(--s-3) var(--s-4); margin: 0 0 var(--s-4); border: 1px solid; font-weight: 500; }
.flash-ok { background: var(--c-ok-soft); border-color: #9fd3b4; color: var(--c-ok); }
.flash-bad { background: var(--c-bad-soft); border-color: #e7a9ab; color: var(--c-bad); }
.flash-info { background: var(--c-accent-soft); border-color: #a9c3ea; color: var(--c-fg); }
.flash p { margin: 0; }
.flash p + p, .flash p + ul, .flash ul + p { margin-top: var(--s-2); }
.note { background: var(--c-warn-soft); border: 1px solid var(--c-warn-line); border-radius: var(--radius-sm); padding: var(--s-3) var(--s-4); margin: 0 0 var(--s-4); }
.note p { margin: 0; }
.note p + p { margin-top: var(--s-2); }
.empty { text-align: center; padding: var(--s-5) var(--s-4); border: 1px dashed var(--c-line); border-radius: var(--radius-sm); color: var(--c-muted); }
.empty p { margin: 0 0 var(--s-2); }
.empty strong { color: var(--c-fg); }

/* Text helpers */
.muted { color: var(--c-muted); }
small.id, .id { color: var(--c-muted); font-family: var(--mono); font-size: var(--t-xs); overflow-wrap: anywhere; }
.error { color: var(--c-bad); font-weight: 600; }
.ok { color: var(--c-ok); font-weight: 600; }
.warning { background: var(--c-warn-soft); border: 1px solid var(--c-warn-line); border-radius: var(--radius-sm); padding: var(--s-2) var(--s-3); }
.secret { display: block; width: 100%; padding: var(--s-2); background: var(--c-warn-soft); border: 1px solid var(--c-warn-line); border-radius: var(--radius-sm); font: var(--t-sm) var(--mono); overflow-wrap: anywhere; }
input.secret { cursor: text; }
code { font-family: var(--mono); font-size: 0.92em; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: var(--s-1) var(--s-4); margin: var(--s-2) 0; }
dl.facts dt { color: var(--c-muted); }
dl.facts dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
ul.plain { list-style: none; padding: 0; margin: 0; }
ul.plain li { padding: var(--s-2) 0; border-bottom: 1px solid var(--c-line); overflow-wrap: anywhere; }
ul.plain li:last-child { border-bottom: 0; }
.pager { display: flex; flex-wrap: wrap; gap: var(--s-3); justify-content: space-between; align-items: center; margin-top: var(--s-3); }

/* Data tables: a table on a wide screen, one card per row below 640 px */
.table-wrap { max-width: 100%; }
table { width: 100%; border-collapse: collapse; font-size: var(--t-sm); }
th { text-align: left; font-weight: 600; color: var(--c-muted); font-size: var(--t-xs); text-transform: uppercase; letter-spacing: 0.03em; padding: var(--s-2); border-bottom: 2px solid var(--c-line); white-space: nowrap; }
td { text-align: left; padding: var(--s-2); border-bottom: 1px solid var(--c-line); vertical-align: top; overflow-wrap: normal; }
td.long, td .long { overflow-wrap: anywhere; }
td.nowrap, td.short { white-space: nowrap; }
time.when { white-space: nowrap; }
code.scope { overflow-wrap: normal; }
tbody tr:hover { background: #fafbfc; }
tbody tr:target { background: var(--c-accent-soft); }

/* Filters */
form.filters { display: flex; flex-wrap: wrap; gap: 0 var(--s-3); align-items: flex-end; }
form.filters .field { flex: 1 1 9rem; margin: 0; }
form.filters button { margin-top: var(--s-3); }
form.filters.choice .field { flex-basis: 16rem; }
.view-links { display: flex; flex-wrap: wrap; gap: var(--s-3); margin-bottom: var(--s-2); }
.view-links a[aria-current] { font-weight: 600; }

/* Chart: the SVG scales, its labels are HTML in CSS pixels and do not */
figure.chart { margin: 0; }
.chart-plot { display: grid; grid-template-columns: 2.5rem 1fr; gap: var(--s-1); }
.chart-axis { display: flex; flex-direction: column-reverse; justify-content: space-between; font-size: var(--t-xs); color: var(--c-muted); text-align: right; height: 12rem; line-height: 1; }
.chart-area { position: relative; height: 12rem; min-width: 0; }
.chart-area svg { width: 100%; height: 100%; display: block; }
.chart-days { display: grid; grid-auto-flow: column; grid-auto-columns: minmax(0, 1fr); font-size: var(--t-xs); color: var(--c-muted); text-align: center; margin-left: calc(2.5rem + var(--s-1)); }
.chart-days span { white-space: nowrap; }
.chart-days .today { color: var(--c-fg); font-weight: 700; text-align: right; justify-self: end; }
.chart-grid { stroke: var(--c-line); stroke-width: 1; vector-effect: non-scaling-stroke; }
.chart-today { fill: var(--c-accent-soft); }
.bar-sent { fill: #8fb0e0; } .bar-delivered { fill: var(--c-accent); } .bar-read { fill: var(--c-ok); } .bar-failed { fill: var(--c-bad); }
.legend { display: inline-flex; align-items: center; gap: var(--s-1); margin-right: var(--s-4); font-size: var(--t-sm); }
.legend .swatch { display: inline-block; width: 0.8rem; height: 0.8rem; border-radius: 2px; }
.swatch.bar-sent { background: #8fb0e0; } .swatch.bar-delivered { background: var(--c-accent); } .swatch.bar-read { background: var(--c-ok); } .swatch.bar-failed { background: var(--c-bad); }
figure.chart figcaption { margin-top: var(--s-2); }
.bar-s2xx { fill: var(--c-ok); } .bar-s3xx { fill: #8fb0e0; } .bar-s4xx { fill: var(--c-warn-line); } .bar-s5xx { fill: var(--c-bad); }
.swatch.bar-s2xx { background: var(--c-ok); } .swatch.bar-s3xx { background: #8fb0e0; } .swatch.bar-s4xx { background: var(--c-warn-line); } .swatch.bar-s5xx { background: var(--c-bad); }
progress { width: 100%; max-width: 20rem; height: 0.9rem; }

/* Conversations (kit-conversation.tsx): a list beside its thread; one at a time below 900 px */
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.split { display: grid; grid-template-columns: minmax(16rem, 22rem) minmax(0, 1fr); gap: var(--s-4); align-items: start; }
.split-list, .split-detail { min-width: 0; }
.split-back { display: none; margin-bottom: var(--s-2); }
ul.convs { list-style: none; margin: 0; padding: 0; background: var(--c-surface); border: 1px solid var(--c-line); border-radius: var(--radius); }
ul.convs li + li { border-top: 1px solid var(--c-line); }
a.conv { display: block; padding: var(--s-2) var(--s-3); color: var(--c-fg); text-decoration: none; }
a.conv:hover { background: #fafbfc; }
a.conv[aria-current=page] { background: var(--c-accent-soft); box-shadow: inset 3px 0 0 var(--c-accent); }
.conv-head { display: flex; justify-content: space-between; gap: var(--s-2); }
.conv-title { font-weight: 600; overflow-wrap: anywhere; min-width: 0; }
.conv-unread .conv-title { font-weight: 800; }
.conv-head time { color: var(--c-muted); font-size: var(--t-xs); white-space: nowrap; }
.conv-preview { display: block; color: var(--c-muted); font-size: var(--t-sm); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.conv-badges { display: flex; flex-wrap: wrap; gap: var(--s-1); margin-top: var(--s-1); }
ol.thread { list-style: none; margin: 0 0 var(--s-3); padding: 0; display: flex; flex-direction: column; gap: var(--s-2); }
.bubble { max-width: min(34rem, 85%); padding: var(--s-2) var(--s-3); border-radius: var(--radius); border: 1px solid var(--c-line); background: var(--c-surface); overflow-wrap: anywhere; }
.bubble-in { align-self: flex-start; border-bottom-left-radius: 2px; }
.bubble-out { align-self: flex-end; background: var(--c-accent-soft); border-color: #b9cdee; border-bottom-right-radius: 2px; }
.bubble:target { box-shadow: 0 0 0 3px var(--c-accent); }
.bubble-body p { margin: 0; white-space: pre-wrap; }
.note-body { white-space: pre-wrap; overflow-wrap: anywhere; }
.bubble-body img { display: block; max-width: 100%; height: auto; max-height: 20rem; border-radius: var(--radius-sm); }
.bubble-meta { display: flex; justify-content: flex-end; align-items: center; gap: var(--s-2); font-size: var(--t-xs); color: var(--c-muted); margin-top: var(--s-1); }
.ticks { font-weight: 700; letter-spacing: -0.1em; }
.ticks-read { color: var(--c-accent); }
.ticks-failed { color: var(--c-bad); }
.quote { display: block; border-left: 3px solid var(--c-accent); padding: var(--s-1) var(--s-2); margin-bottom: var(--s-1); background: #0000000a; color: var(--c-fg); font-size: var(--t-sm); text-decoration: none; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
ul.reactions { list-style: none; display: flex; gap: var(--s-1); margin: var(--s-1) 0 0; padding: 0; }
.thread-phone { margin: 0 0 var(--s-3); }
.reply { border-top: 1px solid var(--c-line); margin-top: var(--s-3); padding-top: var(--s-3); }
ul.reactions li { background: var(--c-surface); border: 1px solid var(--c-line); border-radius: 999px; padding: 0 var(--s-2); }
.bubble-buttons { list-style: none; margin: var(--s-2) 0 0; padding: 0; display: flex; flex-direction: column; gap: var(--s-1); }
.bubble-buttons button { width: 100%; background: var(--c-surface); color: var(--c-accent); border: 1px solid var(--c-line); opacity: 1; cursor: default; }
.bubble-list ul { margin: var(--s-1) 0 0; padding-left: var(--s-4); }
.bubble-list-button { color: var(--c-accent); font-weight: 600; margin-top: var(--s-1) !important; }
.bubble-actions { display: flex; flex-wrap: wrap; align-items: flex-start; gap: var(--s-2); font-size: var(--t-sm); margin-top: var(--s-1); }
details.react summary { cursor: pointer; color: var(--c-accent); }
form.react-choice { display: flex; flex-wrap: wrap; gap: var(--s-1); margin-top: var(--s-1); }
form.react-choice button { padding: var(--s-1) var(--s-2); min-width: 2.5rem; background: var(--c-surface); color: var(--c-fg); border: 1px solid var(--c-line); }
nav.compose-modes { display: flex; flex-wrap: wrap; gap: var(--s-2); margin-bottom: var(--s-3); }
.quoting { display: flex; flex-wrap: wrap; align-items: baseline; gap: var(--s-2); margin-bottom: var(--s-2); }
.quoting .quote { flex: 1 1 12rem; min-width: 0; margin: 0; }

@media (max-width: 900px) {
  .split { grid-template-columns: minmax(0, 1fr); }
  .split-back { display: inline-block; }
  .split.showing-detail > .split-list, .split.showing-list > .split-detail { display: none; }
  .shell-desktop { display: none; }
  details.menu { display: block; }
  .shell-bar { position: relative; }
}
@media (max-width: 639px) {
  .shell-bar { padding: var(--s-2) var(--s-4); }
  main { margin: var(--s-4) auto; padding: 0 var(--s-3); }
  section, .card { padding: var(--s-3) var(--s-4); }
  h1 { font-size: 1.35rem; }
  dl.facts { grid-template-columns: 1fr; }
  dl.facts dd { margin-bottom: var(--s-2); }
  table.data thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.data, table.data tbody { display: block; }
  table.data tr { display: block; padding: var(--s-2) 0; border-bottom: 1px solid var(--c-line); }
  table.data td { display: grid; grid-template-columns: 7.5rem minmax(0, 1fr); gap: var(--s-2); border: 0; padding: var(--s-1) 0; }
  table.data td::before { content: attr(data-label); color: var(--c-muted); font-size: var(--t-xs); font-weight: 600; text-transform: uppercase; letter-spacing: 0.03em; padding-top: 0.15rem; }
  table.data td.short, table.data td.nowrap { white-space: normal; }
  table.data td:empty { display: none; }
  table.data td > .badge, table.data td > .status { justify-self: start; }
  .chart-days { font-size: 0.7rem; }
}
`;
