/**
 * The registry of in-flight outbound provider calls per portal. Revocation aborts a portal's
 * calls through it, so no call made with a revoked or replaced token lands afterwards — except
 * sends: a send already made may have been accepted by the provider, so revocation first waits
 * for the portal's sends to end (bounded by the provider timeout) and only then aborts the rest.
 *
 * @see docs/partner-connection.md "Outbound calls"
 */
import { setTimeout as delay } from 'node:timers/promises';

interface Call {
  controller: AbortController;
  /** Resolves when the call ends (sends only). */
  ended?: Promise<void>;
}

/** The in-flight outbound calls of each portal, so revocation can abort them. */
export class InflightCalls {
  readonly #byPortal = new Map<number, Set<Call>>();

  /**
   * Register a call; `release` must run when it ends, whatever happened (it may run twice).
   *
   * @param kind `send` for a call that hands the provider something to do on a person's behalf
   *   (a message send): revocation waits for it (`settleSends`) before aborting.
   */
  start(
    portalId: number,
    kind: 'read' | 'send' = 'read',
  ): { signal: AbortSignal; release: () => void } {
    let end = (): void => {};
    const call: Call = { controller: new AbortController() };
    if (kind === 'send') call.ended = new Promise<void>((resolve) => (end = resolve));
    let set = this.#byPortal.get(portalId);
    if (!set) this.#byPortal.set(portalId, (set = new Set()));
    set.add(call);
    const calls = set;
    return {
      signal: call.controller.signal,
      release: () => {
        end();
        calls.delete(call);
        if (calls.size === 0 && this.#byPortal.get(portalId) === calls)
          this.#byPortal.delete(portalId);
      },
    };
  }

  /**
   * Wait until the portal's sends in flight now have ended, or `timeoutMs` has passed (those
   * still running are then left to `abortPortal`). Never rejects.
   */
  async settleSends(portalId: number, timeoutMs: number): Promise<void> {
    const ended = [...(this.#byPortal.get(portalId) ?? [])].flatMap((c) =>
      c.ended ? [c.ended] : [],
    );
    if (ended.length === 0) return;
    const timer = new AbortController();
    try {
      await Promise.race([
        Promise.all(ended),
        delay(timeoutMs, undefined, { signal: timer.signal }).catch(() => undefined),
      ]);
    } finally {
      timer.abort();
    }
  }

  /** Abort every in-flight call of the portal. */
  abortPortal(portalId: number): void {
    for (const c of this.#byPortal.get(portalId) ?? []) c.controller.abort();
    this.#byPortal.delete(portalId);
  }

  /** Abort every in-flight call (shutdown). */
  abortAll(): void {
    for (const portalId of [...this.#byPortal.keys()]) this.abortPortal(portalId);
  }

  /** How many calls of the portal are in flight (0 after revocation). */
  count(portalId: number): number {
    return this.#byPortal.get(portalId)?.size ?? 0;
  }
}
