/**
 * Keeps the hidden classes of Node's `process.nextTick` entries alive for the life of a server
 * process, so that every `nextTick` stays on V8's fast path.
 *
 * Why: Node 20 builds each entry of the tick queue (a "TickObject") as an object literal with
 * computed symbol keys (`{ [async_id_symbol]: …, [trigger_async_id_symbol]: …, callback, args }`).
 * V8 remembers, per key, the one hidden class (map) it saw there, and holds that map weakly.
 * When full garbage collections find no TickObject alive (the queue is empty between ticks,
 * which is nearly always), those maps die after V8's grace of two collections; the next
 * `nextTick` meets new maps, three of the four keys turn megamorphic for good, and from then on
 * every `nextTick` defines them through the runtime. Streams and HTTP call `nextTick` several
 * times per request, so a server that has run a few quiet full collections pays for it on every
 * request: 22.1 and 22.6 µs of CPU per cached verify (no access line) against 18.7 and 19.0 µs
 * with one TickObject held (servers alive at once under the same load, 2026-11-24). Holding one
 * keeps the chain of maps alive, and the keys stay monomorphic.
 *
 * The TickObject is caught by an `async_hooks` init hook that is enabled for one synchronous
 * `nextTick` call and disabled right after it: no hook stays installed, so neither `nextTick`
 * nor a promise pays for async hooks afterwards. Idempotent.
 *
 * @see docs/decisions/0019-speed.md: its measurement
 */
import { createHook } from 'node:async_hooks';

let retained: object | undefined;

/**
 * Catch one TickObject and keep it for the life of the process.
 *
 * @returns whether one is held: false on a Node whose `nextTick` creates no TickObject (nothing
 *   to keep then; `test/platform/tick-shape.test.ts` says whether this Node still needs it)
 */
export function retainTickObjectShape(): boolean {
  if (retained) return true;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') retained ??= resource;
    },
  });
  hook.enable();
  // The init hook runs synchronously, inside this call.
  process.nextTick(() => undefined);
  // Not from inside the hook: Node 20 defers a change made there and then leaves its promise
  // hooks on (every promise of the process would pay for them).
  hook.disable();
  return retained !== undefined;
}
