/**
 * docs/performance.md is redrawn by the benches: each bench owns the text between its two
 * markers, `<!-- bench:<id> -->` and `<!-- /bench:<id> -->`, and rewrites it whole on every run
 * (the command, the date, the machine's load, the same-run references, its tables). The prose
 * around the markers is written by people. Nothing is appended: older figures live in git.
 *
 * The page is formatted with the repository's Prettier settings after the change, so a redrawn
 * page passes `prettier --check` (`npm run lint`).
 *
 * Usage from a bench:
 *
 * ```ts
 * const context = await runContext(); // before the run: date, uptime
 * …
 * await redrawSection('pages', [context.line('npm run bench:pages'), table(…)].join('\n\n'));
 * ```
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';

export const PERFORMANCE_DOC = fileURLToPath(new URL('../docs/performance.md', import.meta.url));

/** The markers of a bench's section. */
export function markers(id: string): { open: string; close: string } {
  return { open: `<!-- bench:${id} -->`, close: `<!-- /bench:${id} -->` };
}

/**
 * Replace the text between the bench's markers with `body` and format the page.
 *
 * @throws Error when the page lacks either marker (a section is placed by a person once, in
 *   the page's order; the bench then only redraws it).
 */
export async function redrawSection(
  id: string,
  body: string,
  file: string = PERFORMANCE_DOC,
): Promise<void> {
  const { open, close } = markers(id);
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start < 0 || end < start)
    throw new Error(`${file} has no section ${open} … ${close}: add the two markers first`);
  const next = `${text.slice(0, start + open.length)}\n\n${body.trim()}\n\n${text.slice(end)}`;
  const options = (await prettier.resolveConfigFile(file))
    ? await prettier.resolveConfig(file)
    : null;
  writeFileSync(file, await prettier.format(next, { ...options, filepath: file }));
}

/** A Markdown table (Prettier aligns it); `right` marks the columns of figures. */
export function table(head: string[], rows: string[][], right: boolean[] = []): string {
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [
    line(head),
    `| ${head.map((_, i) => (right[i] ? '---:' : '---')).join(' | ')} |`,
    ...rows.map(line),
  ].join('\n');
}

/** `PASS` or `MISS`: a bench's console line against its threshold (the page states figures). */
export const verdict = (ok: boolean): string => (ok ? 'PASS' : 'MISS');

/** `1234.5` → `1,235`; below 10 one decimal. */
export function figure(value: number): string {
  return value < 10
    ? value.toFixed(1)
    : Math.round(value).toLocaleString('en-US', { maximumFractionDigits: 0 });
}

/** The machine's state around a run: the date, `uptime` before and after. */
export interface RunContext {
  startedAt: Date;
  uptimeBefore: string;
  loadBefore: number[];
  /** Take the state after the run (call once the measuring is over). */
  finish(): { uptimeAfter: string; loadAfter: number[] };
  /**
   * The line every section starts with: the command, the date (UTC), the machine, and the
   * load average (1 min) before → after.
   */
  line(command: string): string;
}

function uptime(): string {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return `load average: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}`;
  }
}

export function runContext(): RunContext {
  const startedAt = new Date();
  const uptimeBefore = uptime();
  const loadBefore = loadavg();
  let after: { uptimeAfter: string; loadAfter: number[] } | undefined;
  const finish = () => (after ??= { uptimeAfter: uptime(), loadAfter: loadavg() });
  return {
    startedAt,
    uptimeBefore,
    loadBefore,
    finish,
    line(command) {
      const { loadAfter } = finish();
      const cpu = cpus();
      return (
        `\`${command}\`, ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ` +
        `${cpu.length} CPUs (${cpu[0]?.model.trim() ?? 'unknown'}, shared), node ${process.version}; ` +
        `load average ${loadBefore[0]!.toFixed(2)} → ${loadAfter[0]!.toFixed(2)} during the run.`
      );
    },
  };
}
