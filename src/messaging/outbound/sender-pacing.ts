/**
 * Pacing of each sender number: at most `ratePerSecond` sends per phone number id from this
 * instance, spaced evenly (a scheduler in the manner of GCRA: each send takes the next free slot,
 * 1/rate apart, and waits for it). Per instance, so N instances send at most N × rate per
 * number; the provider's 130429 answer to an excess is retried with backoff
 * (docs/messaging.md "Delivery and pacing").
 *
 * @see https://developers.facebook.com/docs/whatsapp/throughput
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface SenderPacing {
  /**
   * Wait for this number's next free slot.
   *
   * @param signal aborts the wait (shutdown); the slot stays taken.
   */
  take(phoneNumberId: string, signal?: AbortSignal): Promise<void>;
  /**
   * The provider asked this number to wait (`Retry-After`, in ms): its next slot is no sooner
   * than `ms` from now.
   *
   * @see https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3
   */
  pause(phoneNumberId: string, ms: number): void;
}

/** Slots of numbers idle for longer than this are forgotten (bounds the map), in ms. */
const IDLE_FORGET_MS = 60_000;

export function createSenderPacing(ratePerSecond: number, now = () => Date.now()): SenderPacing {
  const spacingMs = 1000 / ratePerSecond;
  /** Per phone number id: the instant (ms) of its last taken slot. */
  const lastSlot = new Map<string, number>();
  let lastSweep = now();
  return {
    async take(phoneNumberId, signal) {
      const t = now();
      if (t - lastSweep > IDLE_FORGET_MS) {
        for (const [id, at] of lastSlot) if (t - at > IDLE_FORGET_MS) lastSlot.delete(id);
        lastSweep = t;
      }
      const previous = lastSlot.get(phoneNumberId);
      const slot = previous === undefined ? t : Math.max(t, previous + spacingMs);
      lastSlot.set(phoneNumberId, slot);
      const wait = slot - t;
      if (wait >= 1) await sleep(wait, undefined, signal ? { signal } : undefined);
    },
    pause(phoneNumberId, ms) {
      const resume = now() + ms - spacingMs;
      lastSlot.set(phoneNumberId, Math.max(lastSlot.get(phoneNumberId) ?? 0, resume));
    },
  };
}
