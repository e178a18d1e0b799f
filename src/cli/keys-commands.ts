/**
 * The commands for the encryption keys: `keys rotate` (re-seal every sealed value under the
 * first key of TOKEN_ENCRYPTION_KEYS, in runs of at most `--max` values, with progress) and
 * `keys check` (how many values each key still seals, per table, and which keys may go).
 *
 * @see docs/how-to/rotate-keys.md
 */
import { Type } from 'typebox';
import type { ColumnReseal, ResealResult } from '../db/sealing.ts';
import { cliActor, defineCommand, wholeNumber } from './command.ts';

/** Values re-sealed per run of `keys rotate` from the command line (one audit event each). */
export const ROTATE_RUN_MAX = 10_000;

/** A total over runs: the counts per column added up. */
function addRun(total: ResealResult | undefined, run: ResealResult): ResealResult {
  if (!total) return run;
  const columns: ColumnReseal[] = total.columns.map((c, i) => {
    const r = run.columns[i]!;
    return {
      column: c.column,
      resealed: c.resealed + r.resealed,
      sealed: c.sealed + r.sealed,
      unreadable: r.unreadable,
    };
  });
  return { activeKeyId: run.activeKeyId, columns, remaining: run.remaining };
}

export const keysRotate = defineCommand({
  name: 'keys rotate',
  description:
    're-seal every sealed value (provider tokens, webhook secrets, message content, media file ' +
    'names, webhook events, drafts) under the first key of TOKEN_ENCRYPTION_KEYS; resumable, ' +
    'keep the old key listed until `keys check` shows nothing under it',
  args: Type.Object({ max: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })) }),
  options: {
    max: {
      value: '<n>',
      description: `values per run (1-1000000, default ${ROTATE_RUN_MAX}); runs repeat until done`,
      parse: wholeNumber(1, 1_000_000),
    },
  },
  run: async (services, a) =>
    services.partner.rotateKeys(await cliActor(), a.max === undefined ? {} : { max: a.max }),
  // Runs of at most `--max` values until nothing is left that the keys can open, each run's
  // progress on stderr: a stop (Ctrl-C, a crash) loses nothing, the next `keys rotate` resumes.
  send: async (o, exec) => {
    const max = typeof o.max === 'number' ? o.max : ROTATE_RUN_MAX;
    let total: ResealResult | undefined;
    for (;;) {
      const run = await exec({ max });
      total = addRun(total, run);
      const done = run.columns.reduce((n, c) => n + c.resealed + c.sealed, 0);
      process.stderr.write(`keys rotate: ${done} re-sealed, ${run.remaining} left\n`);
      if (done === 0 || run.remaining === 0) return total;
    }
  },
  print: (k) => {
    const lines = k.columns
      .filter((c) => c.resealed + c.sealed + c.unreadable > 0)
      .map(
        (c) =>
          `  ${c.column}: ${c.resealed} re-sealed` +
          (c.sealed > 0 ? `, ${c.sealed} sealed from clear` : '') +
          (c.unreadable > 0 ? `, ${c.unreadable} could not be opened` : ''),
      );
    const done = k.columns.reduce((n, c) => n + c.resealed + c.sealed, 0);
    const tail =
      k.remaining === 0
        ? 'Nothing is left under another key: the other keys can be removed (see `keys check`).'
        : `${k.remaining} value(s) are still under another key or in clear: see \`keys check\`.`;
    return [`Re-sealed ${done} value(s) under key ${k.activeKeyId}.`, ...lines, tail].join('\n');
  },
});

export const keysCheck = defineCommand({
  name: 'keys check',
  description:
    'count the sealed values per table and key, and say which keys of TOKEN_ENCRYPTION_KEYS ' +
    'nothing uses any more (safe to remove)',
  args: Type.Object({}),
  options: {},
  run: (services) => services.partner.checkKeys(),
  print: (k) => {
    const lines = k.uses.map(
      (u) =>
        `  ${u.column}: ${u.rows} ` +
        (u.keyId === null
          ? 'in clear'
          : `under ${u.keyId}${u.keyId === k.activeKeyId ? ' (active)' : u.known ? '' : ' (NOT in TOKEN_ENCRYPTION_KEYS)'}`),
    );
    return [
      `Active key: ${k.activeKeyId}.`,
      ...(lines.length > 0 ? ['Sealed values:', ...lines] : ['No sealed value is stored.']),
      k.remaining === 0
        ? 'Every value is under the active key.'
        : `${k.remaining} value(s) are not under the active key: run \`keys rotate\`.`,
      k.removable.length > 0
        ? `Safe to remove: ${k.removable.join(', ')}.`
        : 'No listed key can be removed yet.',
    ].join('\n');
  },
});
