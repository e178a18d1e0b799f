/**
 * One stored row never turns a read into a 500 (docs/decisions/0033-input-validation.md). A row written by an older
 * version, or with a value an entry let through then, may no longer fit the response schema
 * (a location without its longitude, a time past year 9999): the response serializer would
 * throw for the whole page. Each item of a read is checked against its schema first; one that
 * does not fit is logged (ids only) and shown degraded (its content left out), or left out of
 * the page when even that does not fit.
 *
 * @see docs/architecture.md "platform/"
 */
import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

/** What became of an item that did not fit. */
export type Misfit = 'degraded' | 'left out';

/** The checker of one schema, compiled at its first use. */
export function rowCheck<T extends TSchema>(schema: T): (value: unknown) => value is Static<T> {
  let checker: { Check(value: unknown): boolean } | undefined;
  return (value): value is Static<T> => (checker ??= Compile(schema)).Check(value);
}

/**
 * The item `full` builds when it fits `fits`; else the one `degraded` builds when that fits;
 * else null. `misfit` is told once, with what happened and the error a builder threw (if any).
 */
export function fittingView<T>(
  fits: (value: unknown) => value is T,
  full: () => T,
  degraded: () => T,
  misfit: (outcome: Misfit, err?: unknown) => void,
): T | null {
  let error: unknown;
  try {
    const view = full();
    if (fits(view)) return view;
  } catch (err) {
    error = err;
  }
  try {
    const view = degraded();
    if (fits(view)) {
      misfit('degraded', error);
      return view;
    }
  } catch (err) {
    error ??= err;
  }
  misfit('left out', error);
  return null;
}

/** A Date as ISO 8601 when it can be written as one (year 0–9999), else null. */
export function isoOrNull(date: Date | null): string | null {
  if (date === null) return null;
  const ms = date.getTime();
  // 9999-12-31T23:59:59.999Z; earlier than year 0 or later has a six-digit year.
  return Number.isFinite(ms) && ms >= -62_167_219_200_000 && ms <= 253_402_300_799_999
    ? date.toISOString()
    : null;
}
