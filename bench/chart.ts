/**
 * The benchmark table as an SVG bar chart (requests/s per server, with p50/p99 and peak RSS
 * beside each bar, and a dashed line at the reference row's requests/s: the Fastify constant
 * route with the access line).
 *
 * Built from elements, never by pasting data into markup: every attribute value and text node
 * goes through `escapeXml`.
 */

interface Row {
  label: string;
  reqPerSec: number;
  reqRatio: number;
  p50Ms: number;
  p99Ms: number;
  maxRssMb: number;
  cpuUsPerReq: number;
}

interface Record {
  at: string;
  node: string;
  cpus: number;
  load: { connections: number; durationSeconds: number };
  loadAverage: { before: number[] };
  /** The row the dashed line marks. */
  reference?: { label: string; reqPerSec: number } | undefined;
  /** Mean of the floor runs. */
  floor: { reqPerSec: number };
  rows: Row[];
}

/** Escape text for XML character data and double-quoted attribute values. */
export function escapeXml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

type Child = string | Element;
interface Element {
  tag: string;
  attrs: { [name: string]: string | number };
  children: Child[];
}

function el(tag: string, attrs: Element['attrs'], ...children: Child[]): Element {
  return { tag, attrs, children };
}

function serialize(node: Child): string {
  if (typeof node === 'string') return escapeXml(node);
  const attrs = Object.entries(node.attrs)
    .map(([k, v]) => ` ${k}="${escapeXml(String(v))}"`)
    .join('');
  return `<${node.tag}${attrs}>${node.children.map(serialize).join('')}</${node.tag}>`;
}

export function renderChart(record: Record): string {
  const rows = record.rows;
  const labelW = 300;
  const barMax = 380;
  const noteW = 330;
  const rowH = 34;
  const top = 56;
  const width = labelW + barMax + noteW + 20;
  const height = top + rows.length * rowH + 44;
  const max = Math.max(...rows.map((r) => r.reqPerSec), 1);
  const x = (v: number) => labelW + (v / max) * barMax;
  const font = { 'font-family': 'system-ui, sans-serif', 'font-size': 13 };

  const children: Element[] = [
    el('rect', { width, height, fill: '#ffffff' }),
    el(
      'text',
      { x: 10, y: 22, ...font, 'font-size': 15, 'font-weight': 'bold' },
      'Portico: GET /auth/verify vs a bare node:http floor (requests/s, higher is better)',
    ),
    el(
      'text',
      { x: 10, y: 40, ...font, 'font-size': 11, fill: '#555555' },
      `${record.load.connections} connections, ${record.load.durationSeconds} s each, ${record.cpus} CPUs (shared), node ${record.node}, ${record.at.slice(0, 16).replace('T', ' ')} UTC, load avg ${record.loadAverage.before[0]?.toFixed(2) ?? '?'}`,
    ),
  ];
  rows.forEach((r, i) => {
    const y = top + i * rowH;
    const isVerify = r.label.startsWith('verify');
    const isFloor = r.label.startsWith('node:http');
    children.push(
      el('text', { x: 10, y: y + 18, ...font }, r.label),
      el('rect', {
        x: labelW,
        y: y + 4,
        width: Math.max(1, x(r.reqPerSec) - labelW),
        height: rowH - 12,
        fill: isVerify
          ? r.label.includes('cache on')
            ? '#2b7bb9'
            : '#9bbcd6'
          : isFloor
            ? '#555555'
            : '#999999',
      }),
      el(
        'text',
        { x: x(r.reqPerSec) + 6, y: y + 18, ...font, 'font-size': 12 },
        `${Math.round(r.reqPerSec).toLocaleString('en-US')} (${r.reqRatio.toFixed(2)}×)`,
      ),
      el(
        'text',
        { x: labelW + barMax + 110, y: y + 18, ...font, 'font-size': 11, fill: '#333333' },
        `p50 ${r.p50Ms} / p99 ${r.p99Ms} ms · ${r.cpuUsPerReq.toFixed(0)} µs CPU/req · ${r.maxRssMb.toFixed(0)} MB peak RSS`,
      ),
    );
  });
  const bottom = top + rows.length * rowH;
  if (record.reference) {
    const refX = x(record.reference.reqPerSec);
    children.push(
      el('line', {
        x1: refX,
        x2: refX,
        y1: top - 2,
        y2: bottom,
        stroke: '#c0392b',
        'stroke-dasharray': '4 3',
      }),
      el(
        'text',
        {
          x: refX,
          y: bottom + 16,
          ...font,
          'font-size': 11,
          fill: '#c0392b',
          'text-anchor': 'middle',
        },
        `reference: ${record.reference.label}`,
      ),
    );
  }
  return `${serialize(
    el(
      'svg',
      { xmlns: 'http://www.w3.org/2000/svg', width, height, viewBox: `0 0 ${width} ${height}` },
      ...children,
    ),
  )}\n`;
}
