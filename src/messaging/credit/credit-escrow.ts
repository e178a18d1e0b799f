/**
 * This instance's escrow blocks of credit (docs/decisions/0026-credit-escrow.md): a send holds
 * its price from the portal's current block in memory, before its statement, so no send of a
 * portal waits for another's commit. When the block runs low another is leased in the
 * background (credit-leases.ts `takeLease`); a used-up or replaced block is settled as soon as
 * its last send finished; `close` settles every block at shutdown.
 *
 * Why the credit stays exact: a block is counted whole in `credit_accounts.reserved` from the
 * moment it is leased, and this process alone reserves from it, never more than its amount (the
 * holds below are counted before the statement, in one thread). A hold is given back only when
 * nothing was written (a replay, the block settled meanwhile); a send that failed with an
 * unknown outcome keeps its hold, and the block's settlement counts what was actually written.
 * A refusal (null) means that after settling every block of the portal, on every instance, what
 * is left does not cover the price.
 *
 * `credit.low` stays exact too (docs/messaging.md "Credit"): while a block holds at least the
 * portal's threshold beyond its holds, the available credit (which includes that unused part)
 * cannot fall below the threshold, so those sends skip the check. Once a block would go below
 * it, the block's later holds are "zone" holds: each waits until the block's other holds have
 * finished, and its send computes the exact available credit under a lock of the portal (one at
 * a time), as every send did before.
 */
import { hostname } from 'node:os';
import type { Database } from '../../db/client.ts';
import { randomBase62 } from '../../platform/crypto.ts';
import { AppError } from '../../platform/errors.ts';
import type { Logger } from '../../platform/logger.ts';
import { settleLease, takeLease, type Lease } from './credit-leases.ts';

/** A block covers this many sends at the price of the send that leased it (plus the threshold). */
const BLOCK_SENDS = 256;
/** Blocks older than this (seconds) are settled by the next lease of their portal, whoever holds them. */
export const LEASE_MAX_AGE_S = 60;
/** A portal's `credit.low` threshold is read again after this long (ms). */
const THRESHOLD_TTL_MS = 1000;
/** Leases one hold may take before it gives up (each new block went to other sends first). */
const MAX_ATTEMPTS = 8;

/** One send's price, held from a block until its statement's outcome is known. */
export interface Hold {
  readonly leaseId: number;
  /** Whether the send must check `credit.low` exactly (see the module's comment). */
  readonly zone: boolean;
  /** The reservation was written, or may have been (an unknown outcome): it stays counted. */
  done(): void;
  /** Nothing was written: the price returns to the block. */
  unused(): void;
  /** The block was settled before the statement (its fence found no row): lease again. */
  lost(): void;
}

export interface CreditEscrow {
  /**
   * Hold `price` (> 0) for one send of the portal.
   *
   * @returns the hold, or null when the portal's credit does not cover the price.
   * @throws AppError `unavailable` when blocks were settled under this hold too many times.
   */
  hold(portalId: number, price: number): Promise<Hold | null>;
  /** Settle every block of this instance (shutdown; after the sends finished). */
  close(): Promise<void>;
}

interface Block extends Lease {
  remaining: number;
  inFlight: number;
  /** Holds in flight outside the zone. */
  loose: number;
  threshold: number | null;
  zone: boolean;
  closed: boolean;
  retired: boolean;
  takenAt: number;
  settling: Promise<void> | null;
  onDrained: (() => void)[];
}

interface EscrowContext {
  db: Database;
  log: Logger;
  holder: string;
  readThreshold: ((portalId: number) => Promise<number | null>) | undefined;
}

/** One portal's blocks on this instance. */
class PortalEscrow {
  private current: Block | null = null;
  private readonly retired = new Set<Block>();
  private refilling: Promise<boolean> | null = null;
  private threshold: { value: number | null; readAt: number } | null = null;
  private thresholdRead: Promise<void> | null = null;

  constructor(
    private readonly ctx: EscrowContext,
    private readonly portalId: number,
  ) {}

  async hold(price: number): Promise<Hold | null> {
    // Waiting for another send's lease is not an attempt; a lease of this hold's own is.
    for (let leases = 0; leases < MAX_ATTEMPTS;) {
      await this.freshThreshold();
      const b = this.current;
      if (b && Date.now() - b.takenAt > (LEASE_MAX_AGE_S * 1000) / 2) this.retire(b);
      else if (b && b.remaining >= price) {
        const hold = this.take(b, price);
        // Lease the next block before this one runs out (not in the zone: the credit is low).
        const spare = b.remaining - (b.threshold ?? 0);
        if (!this.refilling && !b.zone && spare < (b.amount - (b.threshold ?? 0)) / 4)
          this.refill(price, false).catch((err: unknown) =>
            this.ctx.log.warn({ portalId: this.portalId, err }, 'leasing a credit block failed'),
          );
        if (hold.zone && b.loose > 0) await new Promise<void>((wake) => b.onDrained.push(wake));
        return hold;
      }
      if (this.refilling) {
        await this.refilling;
        continue;
      }
      leases++;
      if (!(await this.refill(price, true))) return null;
    }
    throw new AppError('unavailable', 'Credit could not be reserved; try again.');
  }

  /** Settle every block (after the last refill), waiting for the settlements. */
  async close(): Promise<void> {
    await this.refilling?.catch(() => false);
    if (this.current) this.retire(this.current);
    const pending: Promise<void>[] = [];
    for (const b of this.retired) {
      this.settle(b);
      if (b.settling) pending.push(b.settling);
    }
    await Promise.all(pending);
  }

  private take(b: Block, price: number): Hold {
    b.remaining -= price;
    b.inFlight++;
    const zone = b.zone || (b.threshold !== null && b.remaining < b.threshold);
    if (zone) b.zone = true;
    else b.loose++;
    let finished = false;
    const finish = (outcome: 'done' | 'unused' | 'lost') => {
      if (finished) return;
      finished = true;
      b.inFlight--;
      if (!zone && --b.loose === 0) for (const wake of b.onDrained.splice(0)) wake();
      if (outcome === 'unused' && !b.closed) b.remaining += price;
      if (outcome === 'lost') this.closed([b.id]);
      this.settle(b);
    };
    return {
      leaseId: b.id,
      zone,
      done: () => finish('done'),
      unused: () => finish('unused'),
      lost: () => finish('lost'),
    };
  }

  private refill(price: number, settleAll: boolean): Promise<boolean> {
    const threshold = this.threshold?.value ?? null;
    this.refilling = takeLease(this.ctx.db, {
      portalId: this.portalId,
      holder: this.ctx.holder,
      price,
      desired: BLOCK_SENDS * price + (threshold ?? 0),
      settleAll,
      maxAgeS: LEASE_MAX_AGE_S,
    })
      .then(({ lease, settled }) => {
        this.closed(settled);
        if (!lease) return false;
        if (this.current) this.retire(this.current);
        this.current = {
          ...lease,
          remaining: lease.amount,
          inFlight: 0,
          loose: 0,
          threshold,
          zone: false,
          closed: false,
          retired: false,
          takenAt: Date.now(),
          settling: null,
          onDrained: [],
        };
        return true;
      })
      .finally(() => {
        this.refilling = null;
      });
    return this.refilling;
  }

  private async freshThreshold(): Promise<void> {
    const read = this.ctx.readThreshold;
    if (!read || (this.threshold && Date.now() - this.threshold.readAt < THRESHOLD_TTL_MS)) return;
    this.thresholdRead ??= read(this.portalId)
      .then((value) => {
        const changed = this.threshold !== null && this.threshold.value !== value;
        this.threshold = { value, readAt: Date.now() };
        // A block keeps the threshold it was leased with: a new one starts a new block.
        if (changed && this.current) this.retire(this.current);
      })
      .finally(() => {
        this.thresholdRead = null;
      });
    await this.thresholdRead;
  }

  /** Stop holding from `b`; settle it once its last send finished. */
  private retire(b: Block): void {
    b.retired = true;
    if (this.current === b) this.current = null;
    if (!b.closed) this.retired.add(b);
    this.settle(b);
  }

  private settle(b: Block): void {
    if (!b.retired || b.closed || b.inFlight > 0 || b.settling) return;
    b.settling = settleLease(this.ctx.db, this.portalId, b.id).then(
      () => {
        b.closed = true;
        this.retired.delete(b);
      },
      (err: unknown) => {
        // Left open: the next lease of the portal settles it once it is stale, or `close`.
        b.settling = null;
        this.ctx.log.warn(
          { portalId: this.portalId, leaseId: b.id, err },
          'settling a credit block failed',
        );
      },
    );
  }

  /** The blocks `ids` were settled (by a lease, or another instance): nothing holds from them. */
  private closed(ids: readonly number[]): void {
    for (const b of [this.current, ...this.retired]) {
      if (!b || !ids.includes(b.id)) continue;
      b.closed = true;
      b.remaining = 0;
      this.retired.delete(b);
      if (this.current === b) this.current = null;
    }
  }
}

export function createCreditEscrow(deps: {
  db: Database;
  logger: Logger;
  /** The portal's `credit.low` threshold (minor units), or null: none (webhooks' setting). */
  threshold?: ((portalId: number) => Promise<number | null>) | undefined;
}): CreditEscrow {
  const ctx: EscrowContext = {
    db: deps.db,
    log: deps.logger.child({ component: 'credit-escrow' }),
    holder: `${hostname()}:${process.pid}:${randomBase62(6)}`,
    readThreshold: deps.threshold,
  };
  const portals = new Map<number, PortalEscrow>();
  return {
    hold(portalId, price) {
      let p = portals.get(portalId);
      if (!p) portals.set(portalId, (p = new PortalEscrow(ctx, portalId)));
      return p.hold(price);
    },
    async close() {
      await Promise.all([...portals.values()].map((p) => p.close()));
    },
  };
}
