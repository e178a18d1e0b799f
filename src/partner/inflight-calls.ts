/**
 * The registry of in-flight outbound provider calls per portal. Revocation aborts a portal's
 * calls through it, so no call made with a revoked or replaced token lands afterwards.
 *
 * @see docs/partner-connection.md "Outbound calls"
 */

/** The in-flight outbound calls of each portal, so revocation can abort them. */
export class InflightCalls {
  readonly #byPortal = new Map<number, Set<AbortController>>();

  /** Register a call; `release` must run when it ends, whatever happened. */
  start(portalId: number): { signal: AbortSignal; release: () => void } {
    const controller = new AbortController();
    let set = this.#byPortal.get(portalId);
    if (!set) this.#byPortal.set(portalId, (set = new Set()));
    set.add(controller);
    const calls = set;
    return {
      signal: controller.signal,
      release: () => {
        calls.delete(controller);
        if (calls.size === 0 && this.#byPortal.get(portalId) === calls)
          this.#byPortal.delete(portalId);
      },
    };
  }

  /** Abort every in-flight call of the portal. */
  abortPortal(portalId: number): void {
    for (const c of this.#byPortal.get(portalId) ?? []) c.abort();
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
